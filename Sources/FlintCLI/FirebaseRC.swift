import Foundation

/// firebase-tools' project aliases, kept in `.firebaserc` beside firebase.json. Its `default`
/// alias is the project `firebase emulators:exec` names to the command it runs when no project
/// is given, so suites that read `GCLOUD_PROJECT` find one under `flint exec` too.
enum FirebaseRC {
    /// The `default` alias of the `.firebaserc` in `directory`; nil when there is no file or no
    /// such alias. A file that is not JSON is reported on standard error and otherwise ignored,
    /// as firebase-tools ignores it.
    static func defaultProject(in directory: String) -> String? {
        let path = (directory as NSString).appendingPathComponent(".firebaserc")
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            FileHandle.standardError.write(Data("flint: \(path) is not readable JSON; its default project is not used.\n".utf8))
            return nil
        }
        guard let project = (root["projects"] as? [String: Any])?["default"] as? String, !project.isEmpty else { return nil }
        return project
    }
}
