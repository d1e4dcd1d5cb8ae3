import CImageCodec

/// Pixels in memory: 8-bit RGB, rows top to bottom, no padding.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// `width × height × 3` bytes.
    public let pixels: [UInt8]

    /// An image of these pixels; throws when their count is not `width × height × 3`.
    public init(width: Int, height: Int, pixels: [UInt8]) throws(ImageCodecError) {
        guard width > 0, height > 0, width <= 65_500, height <= 65_500, pixels.count == width * height * 3 else {
            throw ImageCodecError(.invalidArgument, "\(pixels.count) bytes are not \(width)×\(height) RGB pixels")
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The rectangle at (`x`, `y`) of `cropWidth × cropHeight`, resampled to `toWidth × toHeight`:
    /// averaged where it shrinks, bilinear where it grows.
    public func resampled(x: Int = 0, y: Int = 0, cropWidth: Int? = nil, cropHeight: Int? = nil,
                          toWidth: Int, toHeight: Int) throws(ImageCodecError) -> RGBImage {
        let cropWidth = cropWidth ?? width, cropHeight = cropHeight ?? height
        guard toWidth > 0, toHeight > 0, toWidth <= 65_500, toHeight <= 65_500,
              x >= 0, y >= 0, cropWidth > 0, cropHeight > 0, x + cropWidth <= width, y + cropHeight <= height else {
            throw ImageCodecError(.invalidArgument, "cannot resample \(cropWidth)×\(cropHeight) at \(x),\(y) of a \(width)×\(height) image to \(toWidth)×\(toHeight)")
        }
        var output = [UInt8](repeating: 0, count: toWidth * toHeight * 3)
        let status = pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                tr_image_resample(source.baseAddress, Int32(width), Int32(height), Int32(x), Int32(y), Int32(cropWidth), Int32(cropHeight),
                                  destination.baseAddress, Int32(toWidth), Int32(toHeight))
            }
        }
        guard status == Int32(TR_IMAGE_OK) else {
            throw ImageCodecError(.noMemory, "no memory to resample a \(width)×\(height) image to \(toWidth)×\(toHeight)")
        }
        return try RGBImage(width: toWidth, height: toHeight, pixels: output)
    }

    /// The centre square, as large as the shorter side allows, resampled to `side × side`.
    public func centreSquare(side: Int) throws(ImageCodecError) -> RGBImage {
        let crop = min(width, height)
        return try resampled(x: (width - crop) / 2, y: (height - crop) / 2, cropWidth: crop, cropHeight: crop, toWidth: side, toHeight: side)
    }
}
