import Foundation
import ImageCodec
import Testing

@Suite("JPEG through libjpeg-turbo: whole decodes, encodes, refusals that never end the process")
struct JPEGTests {
    /// A smooth test card: red across, green down, blue constant.
    static func card(width: Int, height: Int) throws -> RGBImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 255 / max(width - 1, 1)), UInt8(y * 255 / max(height - 1, 1)), 96]
            }
        }
        return try RGBImage(width: width, height: height, pixels: pixels)
    }

    static func meanDifference(_ a: RGBImage, _ b: RGBImage) -> Double {
        zip(a.pixels, b.pixels).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(a.pixels.count)
    }

    @Test("An encoded image decodes to its size and nearly its pixels; a check finds the size without keeping them")
    func roundTrip() throws {
        let card = try Self.card(width: 96, height: 72)
        let data = try JPEG.encode(card, quality: 92)
        #expect(data.starts(with: [0xFF, 0xD8, 0xFF]) && data.suffix(2).elementsEqual([0xFF, 0xD9]))
        let decoded = try JPEG.decode(data)
        #expect((decoded.width, decoded.height) == (96, 72))
        #expect(Self.meanDifference(card, decoded) < 4, "lossy, but close")
        let info = try JPEG.check(data)
        #expect((info.width, info.height, info.components) == (96, 72, 3))
        #expect(try JPEG.encode(card, quality: 30).count < data.count, "a lower quality is smaller")
        #expect { try JPEG.encode(card, quality: 0) } throws: { ($0 as? ImageCodecError)?.kind == .invalidArgument }
    }

    @Test("Anything but a whole JPEG is refused as damaged, in libjpeg's words, at every cut, without ending the process")
    func damaged() throws {
        let data = try JPEG.encode(try Self.card(width: 64, height: 48), quality: 85)
        for (what, bytes) in [("nothing", Data()), ("an HTML page", Data("<html><body>Service unavailable</body></html>".utf8)),
                              ("a JPEG header then garbage", data.prefix(30) + Data(repeating: 0x41, count: 2000) + Data([0xFF, 0xD9]))] {
            #expect(Comment(rawValue: what)) { try JPEG.check(bytes) } throws: { error in
                let error = error as? ImageCodecError
                return error?.kind == .damaged && error?.message.hasPrefix("not a whole JPEG: ") == true && (error?.message.count ?? 0) > 20
            }
        }
        // Every cut: libjpeg would pad a short file with grey and say nothing but a warning.
        for length in stride(from: 0, to: data.count - 1, by: 3) {
            #expect(throws: ImageCodecError.self, "cut at \(length) of \(data.count)") { try JPEG.check(data.prefix(length)) }
            #expect(throws: ImageCodecError.self, "cut at \(length), end marker put back") {
                try JPEG.decode(data.prefix(length) + Data([0xFF, 0xD9]))
            }
        }
        // Damage inside the entropy-coded data may or may not be detectable; it must never crash.
        for offset in stride(from: data.count / 2, to: data.count - 2, by: 5) {
            var flipped = data
            flipped[offset] ^= 0xA5
            _ = try? JPEG.decode(flipped)
        }
    }

    @Test("An image claiming more pixels than allowed is refused before it is decoded")
    func tooLarge() throws {
        var data = try JPEG.encode(try Self.card(width: 16, height: 16), quality: 85)
        // The baseline frame header (FFC0): length (2), precision (1), height (2), width (2).
        let frame = try #require((0..<data.count - 1).first { data[$0] == 0xFF && data[$0 + 1] == 0xC0 })
        data.replaceSubrange((frame + 5)..<(frame + 9), with: [0xEA, 0x60, 0xEA, 0x60])  // 60000×60000
        #expect { try JPEG.check(data) } throws: { error in
            (error as? ImageCodecError)?.kind == .tooLarge && "\(error)".contains("60000x60000 pixels")
        }
        #expect(throws: ImageCodecError.self) { try JPEG.check(try JPEG.encode(try Self.card(width: 40, height: 30)), maximumPixels: 1000) }
    }

    @Test("Resampling averages what shrinks, interpolates what grows, and crops the centre square")
    func resampling() throws {
        let red: [UInt8] = [255, 0, 0], blue: [UInt8] = [0, 0, 255]
        let halves = try RGBImage(width: 4, height: 2, pixels: red + red + blue + blue + red + red + blue + blue)
        #expect(try halves.resampled(toWidth: 2, toHeight: 1).pixels == red + blue)
        let grey = try halves.resampled(toWidth: 1, toHeight: 1).pixels
        #expect(grey == [128, 0, 128], "every pixel counts: \(grey)")
        let thirds = try RGBImage(width: 3, height: 1, pixels: [0, 0, 0, 90, 90, 90, 180, 180, 180])
        #expect(try thirds.resampled(toWidth: 2, toHeight: 1).pixels == [30, 30, 30, 150, 150, 150], "pixels split between two are shared")
        let grown = try RGBImage(width: 2, height: 1, pixels: [0, 0, 0, 200, 200, 200]).resampled(toWidth: 4, toHeight: 1).pixels
        #expect(grown == [0, 0, 0, 50, 50, 50, 150, 150, 150, 200, 200, 200])
        let card = try Self.card(width: 160, height: 120)
        let square = try card.centreSquare(side: 150)
        #expect((square.width, square.height) == (150, 150))
        let middle = try card.resampled(x: 20, y: 0, cropWidth: 120, cropHeight: 120, toWidth: 150, toHeight: 150)
        #expect(square == middle)
        #expect { try card.resampled(x: 100, y: 0, cropWidth: 120, cropHeight: 120, toWidth: 10, toHeight: 10) } throws: {
            ($0 as? ImageCodecError)?.kind == .invalidArgument
        }
        #expect(throws: ImageCodecError.self) { try RGBImage(width: 2, height: 2, pixels: [1, 2, 3]) }
    }
}
