import FlintEngine
import FlintServer
import Foundation
import FuzzSupport

// Sequences of requests against one fresh engine per input whose project has the bookstore's
// rules. Each request is a chunk: a kind byte, an auth byte (owner, a user, or nobody), a
// two-byte length, then the request. Kinds 0-12 are google.firestore.v1 messages handed to the
// calls gRPC and REST share (the kind's top bit: JSON rather than binary); 13-15 are HTTP
// requests to the router, written as `METHOD PATH`, header lines, an empty line and the body.

if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--write-seeds" {
    try Seeds.write(to: CommandLine.arguments[2])
    exit(0)
}

fuzz { bytes in
    let input = Array(bytes)
    let finished = DispatchSemaphore(value: 0)
    // Detached: main.swift's code is the main actor's, whose thread waits below.
    Task.detached {
        let engine = Engine()
        engine.rules.load(rules, project: "p")
        let router = FlintServer(engine: engine, configuration: ServerConfiguration(), logger: logger).makeRouter().buildResponder()
        var i = 0
        while i + 4 <= input.count {
            let kind = input[i], who = input[i + 1]
            let length = Int(input[i + 2]) << 8 | Int(input[i + 3])
            let body = Data(input[(i + 4)..<min(input.count, i + 4 + length)])
            i += 4 + length
            let method = (kind & 0x7f) % 16
            if method >= 13 {
                await http(router, body, who)
            } else {
                await call(engine, who, method, body, json: kind & 0x80 != 0)
            }
        }
        finished.signal()
    }
    finished.wait()
}
