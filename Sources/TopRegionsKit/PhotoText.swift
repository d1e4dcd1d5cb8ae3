import Flickr

/// The course's title rules: the title is Flickr's title; if that is empty, the
/// description; if both are empty, "Unknown". The subtitle is the description, empty when
/// the description became the title.
public enum PhotoText {
    public static let unknownTitle = "Unknown"

    public static func title(_ title: String, description: String) -> String {
        let trimmedTitle = title.trimmingCharacters(in: .whitespacesAndNewlines)
        if !trimmedTitle.isEmpty { return title }
        let trimmedDescription = description.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmedDescription.isEmpty ? unknownTitle : description
    }

    public static func subtitle(_ title: String, description: String) -> String {
        title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? "" : description
    }
}

import Foundation
