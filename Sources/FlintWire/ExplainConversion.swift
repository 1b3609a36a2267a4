import FlintModel
import FlintProto
import FlintQuery
import SwiftProtobuf

extension Wire {
    /// Query explain output: the plan summary always, execution statistics when analysed.
    public static func proto(_ m: ExplainMetrics) -> Google_Firestore_V1_ExplainMetrics {
        var p = Google_Firestore_V1_ExplainMetrics()
        p.planSummary.indexesUsed = m.indexesUsed.map(structValue)
        if let e = m.executionStats {
            p.executionStats.resultsReturned = Int64(e.resultsReturned)
            p.executionStats.readOperations = Int64(e.readOperations)
            p.executionStats.executionDuration = Google_Protobuf_Duration(
                seconds: e.executionDurationMicros / 1_000_000, nanos: Int32(e.executionDurationMicros % 1_000_000) * 1000)
            p.executionStats.debugStats = structValue(e.debugStats)
        }
        return p
    }

    /// Explain details are plain maps; `google.protobuf.Struct` carries them.
    static func structValue(_ m: MapValue) -> Google_Protobuf_Struct {
        var s = Google_Protobuf_Struct()
        for e in m.entries {
            switch e.value {
            case .string(let v): s.fields[e.key] = Google_Protobuf_Value(stringValue: v)
            case .integer(let i): s.fields[e.key] = Google_Protobuf_Value(numberValue: Double(i))
            case .map(let inner): s.fields[e.key] = Google_Protobuf_Value(structValue: structValue(inner))
            default: s.fields[e.key] = Google_Protobuf_Value(stringValue: "\(e.value)")
            }
        }
        return s
    }
}
