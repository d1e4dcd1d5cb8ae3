import Foundation
/// What happened to a section.
public enum SectionChange: Sendable, Equatable {
    /// The section was inserted.
    case insert
    /// The section was deleted.
    case delete
}

/// What happened to an object.
public enum ObjectChange: Sendable, Equatable {
    /// The object entered the results.
    case insert
    /// The object left the results.
    case delete
    /// The object changed place (and, when flagged in the batch, content).
    case move
    /// The object's shown content changed in place.
    case update
}

/// Told of each batch in Apple's order: will-change; section changes; object changes
/// (deletes, inserts, moves, updates); did-change. The calls follow the batch's canonical
/// form (`ChangeBatch`): no row call inside a deleted or inserted section. Called where the
/// controller delivers (its `deliveryQueue`, else the thread that noticed the commit), with
/// the controller already in its new state.
public protocol ResultsControllerDelegate: AnyObject {
    /// A batch is about to be reported.
    func controllerWillChangeContent(_ controller: AnyObject)
    /// `index` is the section's index before the batch for a delete, after it for an insert.
    func controller(_ controller: AnyObject, didChangeSection name: String, atIndex index: Int, for change: SectionChange)
    /// Insert: `newIndexPath` only. Delete: `indexPath` only. Move: both. Update: both
    /// (they differ when other rows moved).
    func controller(_ controller: AnyObject, didChangeObject id: Int64, at indexPath: IndexPath?, for change: ObjectChange,
                    newIndexPath: IndexPath?)
    /// The batch has been reported; `change` holds it in all its forms.
    func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange)
}

extension ResultsControllerDelegate {
    /// Does nothing unless the delegate implements it.
    public func controllerWillChangeContent(_ controller: AnyObject) {}
    /// Does nothing unless the delegate implements it.
    public func controller(_ controller: AnyObject, didChangeSection name: String, atIndex index: Int, for change: SectionChange) {}
    /// Does nothing unless the delegate implements it.
    public func controller(_ controller: AnyObject, didChangeObject id: Int64, at indexPath: IndexPath?, for change: ObjectChange,
                           newIndexPath: IndexPath?) {}
    /// Does nothing unless the delegate implements it.
    public func controllerDidChangeContent(_ controller: AnyObject, _ change: ResultsChange) {}
}

/// A section as the controller shows it.
public struct SectionInfo: Sendable, Equatable {
    /// The section's identity: its key's value (NULL apart from `""`).
    public var value: SectionValue
    /// The value as text; NULL is named `""`.
    public var name: String { value.name }
    /// The section's index title (`sectionIndexTitle` of its name); nil for none.
    public var indexTitle: String?
    /// How many objects the section holds.
    public var numberOfObjects: Int

    /// A section with these values.
    public init(value: SectionValue, indexTitle: String?, numberOfObjects: Int) {
        self.value = value
        self.indexTitle = indexTitle
        self.numberOfObjects = numberOfObjects
    }
}
