import Foundation

/// A row's place in a sectioned list, as UIKit spells it on Foundation's `IndexPath`:
/// `[section, row]`. (UIKit adds these members on Apple platforms; on Linux they are here.)
extension IndexPath {
    /// The index path of `row` in `section`.
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The section index (the first index).
    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }

    /// The row index within the section (the second index).
    public var row: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}
