import Foundation

/// What JSONSerialization found wrong with a file, in its own words ("Invalid value around
/// character 5."); Foundation's localized description says only that the data is not in the
/// correct format.
public func jsonProblem(_ error: any Error) -> String {
    (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? error.localizedDescription
}
