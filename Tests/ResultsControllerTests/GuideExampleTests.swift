import Foundation
import ResultsController
import Store
import TestSupport
import SampleDataSupport
import Testing

// guide-example:begin
final class PrintingDelegate: ResultsControllerDelegate, @unchecked Sendable {
    var table: TableModel
    init(_ snapshot: Snapshot) { table = TableModel(snapshot) }

    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {
        // The batch alone turns the table it was made for into the new one.
        try? table.apply(change.batch)
        print("rows now:", table.snapshot.ids)
    }
}

func followPhotosByRegion(store: Store) throws -> (ResultsController<Photo>, PrintingDelegate) {
    let request = FetchRequest(Photo.self, sortDescriptors: [
        SortKey("region.name", collation: .localizedStandard),  // the section key first
        SortKey("title", collation: .localizedStandard),
    ])
    let controller = try ResultsController<Photo>(store: store, request: request, sectionKeyPath: "region.name")
    try controller.performFetch()
    for section in controller.sections {
        print(section.value.isNull ? "(no region)" : section.name, section.numberOfObjects)
    }
    let delegate = PrintingDelegate(controller.snapshot)
    controller.delegate = delegate
    return (controller, delegate)
}

func addPhotoAndWait(store: Store, controller: ResultsController<Photo>, regionID: Int64) throws {
    let commit = try store.commit { try $0.inserted(Photo(flickrID: "1", title: "Harbour", regionID: regionID)) }
    if let token = commit.token {
        _ = controller.waitUntilProcessed(through: token, timeout: 5)
    }
}
// guide-example:end

@Suite("The results controller guide")
struct GuideExampleTests {
    @Test("The guide's example runs: a new photo reaches the delegate's table")
    func exampleRuns() throws {
        let testStore = try TestStore()
        let region = try testStore.store.write { try $0.inserted(Region(name: "Valparaíso")) }
        let (controller, delegate) = try followPhotosByRegion(store: testStore.store)
        try addPhotoAndWait(store: testStore.store, controller: controller, regionID: region.id!)
        #expect(delegate.table.snapshot == controller.snapshot)
        #expect(delegate.table.snapshot.ids.count == 1)
    }

    @Test("docs/results-controller.md shows the example exactly as this file has it")
    func documentShowsTheExample() throws {
        let source = try String(contentsOf: Repository.root.appendingPathComponent("Tests/ResultsControllerTests/GuideExampleTests.swift"), encoding: .utf8)
        let guide = try String(contentsOf: Repository.root.appendingPathComponent("docs/results-controller.md"), encoding: .utf8)
        func example(_ text: String) -> String? {
            guard let start = text.range(of: "// guide-example:begin"), let end = text.range(of: "// guide-example:end") else { return nil }
            return String(text[start.lowerBound..<end.upperBound])
        }
        let fromSource = try #require(example(source))
        #expect(example(guide) == fromSource)
    }
}
