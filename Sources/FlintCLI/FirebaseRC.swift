import Foundation

/// firebase-tools' project aliases, kept in `.firebaserc` beside firebase.json. firebase-tools
/// takes `--project <alias_or_project_id>`, so a suite's CI line may name an alias; and its
/// `default` alias is the project `firebase emulators:exec` names to the command it runs when no
/// project is given, so suites that read `GCLOUD_PROJECT` find one under `flint exec` too.
enum FirebaseRC {
    /// The project `name` stands for: the project of the alias so called in the `.firebaserc`
    /// in `directory`, else `name` itself, as firebase-tools resolves `--project`.
    static func project(named name: String, in directory: String) -> String {
        guard let project = aliases(in: directory, unread: "its project aliases are not used")?[name] as? String,
            !project.isEmpty
        else { return name }
        return project
    }

    /// The `default` alias of the `.firebaserc` in `directory`; nil when there is no file or no
    /// such alias.
    static func defaultProject(in directory: String) -> String? {
        guard let project = aliases(in: directory, unread: "its default project is not used")?["default"] as? String,
            !project.isEmpty
        else { return nil }
        return project
    }

    /// The `projects` object of the `.firebaserc` in `directory`. A file that is not JSON is
    /// reported on standard error, saying what is `unread` for it, and otherwise ignored, as
    /// firebase-tools ignores it.
    private static func aliases(in directory: String, unread: String) -> [String: Any]? {
        let path = (directory as NSString).appendingPathComponent(".firebaserc")
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            FileHandle.standardError.write(Data("flint: \(path) is not readable JSON; \(unread).\n".utf8))
            return nil
        }
        return root["projects"] as? [String: Any]
    }
}
