import Foundation
import Testing

@Suite("sync --json when the pass cannot start")
struct SyncJSONEarlyFailureTests {
    @Test("answers with the report's shape and an error, on stdout, with the exit status of its kind")
    func reportsTheError() throws {
        let tool = try Tool()
        let run = try tool.run(["sync", "--json", "--api-key-file", tool.directory.appendingPathComponent("missing-key").path])
        #expect(run.status == 1)
        let report = try #require(run.json as? [String: Any])
        #expect(report["result"] as? String == "failed")
        let error = try #require(report["error"] as? [String: Any])
        #expect(error["kind"] as? String == "permanent")
        #expect((error["message"] as? String)?.contains("missing-key") == true)
        #expect((report["photos"] as? [String: Any])?["new"] as? Int == 0)
    }
}
