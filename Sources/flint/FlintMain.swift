import FlintCLI

@main
enum FlintMain {
    static func main() async {
        CommandStandIn.becomeTheCommandIfAsked()
        await FlintCommand.main(nil)
    }
}
