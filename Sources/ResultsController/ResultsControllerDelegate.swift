import Foundation
/// What happened to a section.
public enum SectionChange: Sendable, Equatable {
    case insert
    case delete
}

/// What happened to an object.
public enum ObjectChange: Sendable, Equatable {
    case insert
    case delete
    case move
    case update
}

/// Told of each batch in Apple's order: will-change; section changes; object changes
/// (deletes, inserts, moves, updates); did-change. The calls follow the batch's canonical
/// form (`ChangeBatch`): no row call inside a deleted or inserted section. Called where the
/// controller delivers (its `deliveryQueue`, else the thread that noticed the commit), with
/// the controller already in its new state.
public protocol ResultsControllerDelegate: AnyObject {
    func controllerWillChangeContent(_ controller: AnyObject)
    /// `index` is the section's index before the batch for a delete, after it for an insert.
    func controller(_ controller: AnyObject, didChangeSection name: String, atIndex index: Int, for change: SectionChange)
    /// Insert: `newIndexPath` only. Delete: `indexPath` only. Move: both. Update: both
    /// (they differ when other rows moved).
    func controller(_ controller: AnyObject, didChangeObject id: Int64, at indexPath: IndexPath?, for change: ObjectChange,
                    newIndexPath: IndexPath?)
    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange)
}

extension ResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: AnyObject) {}
    public func controller(_ controller: AnyObject, didChangeSection name: String, atIndex index: Int, for change: SectionChange) {}
    public func controller(_ controller: AnyObject, didChangeObject id: Int64, at indexPath: IndexPath?, for change: ObjectChange,
                           newIndexPath: IndexPath?) {}
    public func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {}
}

/// A section as the controller shows it.
public struct SectionInfo: Sendable, Equatable {
    /// The section's identity: its key's value (NULL apart from `""`).
    public var value: SectionValue
    /// The value as text; NULL is named `""`.
    public var name: String { value.name }
    public var indexTitle: String?
    public var numberOfObjects: Int

    public init(value: SectionValue, indexTitle: String?, numberOfObjects: Int) {
        self.value = value
        self.indexTitle = indexTitle
        self.numberOfObjects = numberOfObjects
    }
}
