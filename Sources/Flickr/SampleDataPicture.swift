import CImageCodec
import Foundation
import ImageCodec

/// The picture SampleData shows for a photo it has no image file of: a gradient and a
/// geometric figure, the same for a photo every time, different from photo to photo. The
/// colours come from the photo's region (photos of one region share a family of hues,
/// shifted a little per photo); the figure, its place and its colours' shades from the
/// photo's id. Drawn as a 4:3 landscape at 1024×768, the size of its largest image.
struct SampleDataPicture {
    /// The largest image's pixels; the other sizes are fitted in it, the squares cropped
    /// from its centre.
    static let width = 1024, height = 768
    /// The JPEG quality of every size.
    static let quality = 85

    private var style = tr_picture()

    init(photoID: String, regionID: String?) {
        var random = SplitMix64(seed: Self.hash(photoID))
        let family = regionID.map { Double(Self.hash($0) % 360) } ?? random.unit() * 360
        let hue = family + (random.unit() - 0.5) * 50
        let motif = Int32(random.next() % UInt64(TR_MOTIF_COUNT))
        style.from = Self.rgb(hue: hue, saturation: 0.45 + 0.2 * random.unit(), lightness: 0.2 + 0.12 * random.unit())
        style.to = Self.rgb(hue: hue + 35 + 35 * random.unit(), saturation: 0.5 + 0.2 * random.unit(), lightness: 0.55 + 0.15 * random.unit())
        style.angle = Float(random.unit() * 2 * Double.pi)
        style.motif = motif
        style.accent = Self.rgb(hue: hue + 150 + 60 * random.unit(), saturation: 0.6 + 0.25 * random.unit(), lightness: 0.6 + 0.12 * random.unit())
        style.second = Self.rgb(hue: hue + (random.unit() < 0.5 ? -90 : 90), saturation: 0.35 + 0.2 * random.unit(), lightness: 0.35 + 0.15 * random.unit())
        style.x = Float(0.4 + 0.53 * random.unit())
        style.y = Float(0.3 + 0.4 * random.unit())
        style.size = Float(0.28 + 0.17 * random.unit())
        style.rotation = Float(random.unit() * Double.pi)
        style.seed = UInt32(truncatingIfNeeded: random.next())
        let draw = random.unit()
        switch motif {
        case Int32(TR_MOTIF_RINGS): style.count = 4 + Int32(draw * 5)
        case Int32(TR_MOTIF_HILLS):
            style.count = 2 + Int32(draw * 3)
            style.y = Float(0.18 + 0.2 * random.unit())  // the sun above the hills
        case Int32(TR_MOTIF_DOTS): style.count = 9 + Int32(draw * 9)
        case Int32(TR_MOTIF_STRIPES): style.count = 5 + Int32(draw * 7)
        case Int32(TR_MOTIF_MOSAIC):
            style.count = 7 + Int32(draw * 6)
            style.size = Float(0.5 + 0.3 * random.unit())
        default:
            style.count = 3 + Int32(draw * 4)
            style.size = Float(0.4 + 0.15 * random.unit())
        }
    }

    /// The picture in `size` as a JPEG: squares from the centre, the others 4:3.
    func jpeg(_ size: PhotoSize) throws(ImageCodecError) -> Data {
        let pixels = size.pixelSize(ofWidth: Self.width, height: Self.height)
        return try JPEG.encode(try image(width: pixels.width, height: pixels.height), quality: Self.quality)
    }

    /// The picture drawn into `width × height` pixels (a canvas of another shape than 4:3
    /// shows the scene's centre).
    func image(width: Int, height: Int) throws(ImageCodecError) -> RGBImage {
        guard width > 0, height > 0, width <= 8192, height <= 8192 else {
            throw ImageCodecError(.invalidArgument, "a picture of \(width)×\(height) pixels")
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var style = self.style
        let status = pixels.withUnsafeMutableBufferPointer { buffer in
            tr_picture_render(&style, buffer.baseAddress, Int32(width), Int32(height))
        }
        guard status == 0 else { throw ImageCodecError(.noMemory, "no memory to draw a \(width)×\(height) picture") }
        return try RGBImage(width: width, height: height, pixels: pixels)
    }

    /// FNV-1a: a stable hash of text (Swift's own `Hasher` is seeded per process).
    static func hash(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    /// HSL (hue in degrees, any number) as RGB from 0 to 1.
    static func rgb(hue: Double, saturation: Double, lightness: Double) -> (Float, Float, Float) {
        let h = (hue.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) / 60
        let chroma = (1 - abs(2 * lightness - 1)) * saturation
        let x = chroma * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
        let (r, g, b): (Double, Double, Double)
        switch h {
        case ..<1: (r, g, b) = (chroma, x, 0)
        case ..<2: (r, g, b) = (x, chroma, 0)
        case ..<3: (r, g, b) = (0, chroma, x)
        case ..<4: (r, g, b) = (0, x, chroma)
        case ..<5: (r, g, b) = (x, 0, chroma)
        default: (r, g, b) = (chroma, 0, x)
        }
        let m = lightness - chroma / 2
        return (Float(r + m), Float(g + m), Float(b + m))
    }
}

/// A small, fast generator whose sequence is fixed by its seed (SplitMix64): the same
/// photo id draws the same picture in every process and on every machine.
private struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<1.
    mutating func unit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
