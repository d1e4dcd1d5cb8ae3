import Foundation

/// A row's place in a sectioned list, as UIKit spells it on Foundation's `IndexPath`:
/// `[section, row]`. (UIKit adds these members on Apple platforms; on Linux they are here.)
extension IndexPath {
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }

    public var row: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}
