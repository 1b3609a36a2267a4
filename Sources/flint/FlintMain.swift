import FlintCLI

@main
enum FlintMain {
    static func main() async {
        await FlintCommand.main(nil)
    }
}
