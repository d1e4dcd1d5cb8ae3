#ifndef TOPREGIONS_IMAGE_CODEC_H
#define TOPREGIONS_IMAGE_CODEC_H

#include <stddef.h>

/// What a call of this library ended in. Every call that can fail also writes a sentence
/// into the caller's `message` buffer (libjpeg's own words where it gave some).
enum {
    TR_IMAGE_OK = 0,
    /// The bytes are not a JPEG libjpeg can decode whole: not a JPEG, damaged, cut short.
    TR_IMAGE_DAMAGED = 1,
    /// The image is larger than the caller allows (a few bytes can claim gigapixels).
    TR_IMAGE_TOO_LARGE = 2,
    /// Memory could not be had.
    TR_IMAGE_NO_MEMORY = 3,
    /// The caller asked for something impossible (a zero size, a quality out of range).
    TR_IMAGE_INVALID_ARGUMENT = 4,
};

/// A decoded image. `pixels` is NULL when only checked, else width × height × 3 bytes of
/// RGB, rows top to bottom, owned by the caller (free with tr_image_free).
typedef struct {
    int width;
    int height;
    /// The colour components the file holds (1 grey, 3 YCbCr or RGB, 4 CMYK).
    int components;
    unsigned char *pixels;
} tr_image;

/// Decodes a JPEG whole, every scanline, so that a file that is damaged anywhere fails.
/// With `keep_pixels`, `image->pixels` gets the RGB pixels; else they are read and dropped
/// (any colour space is accepted then, even one that has no RGB conversion). An image of
/// more than `maximum_pixels` is refused before it is decoded. libjpeg's fatal errors
/// and its warnings about damaged data end the call with TR_IMAGE_DAMAGED: libjpeg's
/// default error handler would exit the process, and by default it decodes a truncated
/// file without complaint, padding it with grey.
int tr_jpeg_decode(const unsigned char *bytes, size_t count, int keep_pixels, unsigned long maximum_pixels,
                   tr_image *image, char *message, size_t message_size);

/// Encodes width × height RGB pixels as a baseline JPEG (4:2:0, optimised Huffman tables)
/// at `quality` 1…100. `*output` gets a buffer the caller frees with tr_image_free.
int tr_jpeg_encode(const unsigned char *rgb, int width, int height, int quality,
                   unsigned char **output, unsigned long *output_count, char *message, size_t message_size);

/// Frees what tr_jpeg_decode or tr_jpeg_encode allocated.
void tr_image_free(void *pointer);

/// Resamples the rectangle (x, y, width, height) of an RGB image into a destination of
/// destination_width × destination_height RGB pixels: an area average on an axis that
/// shrinks (every source pixel counts, so no aliasing), bilinear on one that grows. The
/// rectangle must lie inside the source; returns TR_IMAGE_INVALID_ARGUMENT when not.
int tr_image_resample(const unsigned char *source, int source_width, int source_height,
                      int x, int y, int width, int height,
                      unsigned char *destination, int destination_width, int destination_height);

#endif
