import CFuzzDriver

#if canImport(Glibc)
import Glibc
#endif

/// Hands each input libFuzzer makes to `body`, until libFuzzer stops; then exits with its status.
/// A trap, a crash or a timeout in `body` is what libFuzzer reports.
public func fuzz(_ body: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
    target = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        target?(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    })
}

/// libFuzzer calls back through a C function pointer, which cannot capture; the body waits here.
/// Only libFuzzer's one thread reads it, after it is set.
nonisolated(unsafe) private var target: ((UnsafeRawBufferPointer) -> Void)?
