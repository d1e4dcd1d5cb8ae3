#include "image_codec.h"

#include <math.h>
#include <stdlib.h>

/* The source pixels one destination pixel of an axis is made of, with their weights
   (summing to 1): `first` and `count` index `weights`, which holds `taps` per pixel. */
struct tr_axis {
    int *first;
    int *count;
    float *weights;
    int taps;
};

static void tr_axis_free(struct tr_axis *axis) {
    free(axis->first);
    free(axis->count);
    free(axis->weights);
}

/* Shrinking: each destination pixel averages the source span it covers, the pixels at the
   span's ends weighted by the part covered. Growing: bilinear between the two nearest
   source pixel centres. `offset` is where the rectangle starts in the source. */
static int tr_axis_make(struct tr_axis *axis, int offset, int length, int destination) {
    double scale = (double)length / destination;
    axis->taps = scale > 1 ? (int)ceil(scale) + 1 : 2;
    axis->first = malloc(sizeof(int) * (size_t)destination);
    axis->count = malloc(sizeof(int) * (size_t)destination);
    axis->weights = malloc(sizeof(float) * (size_t)destination * (size_t)axis->taps);
    if (axis->first == NULL || axis->count == NULL || axis->weights == NULL) {
        tr_axis_free(axis);
        return -1;
    }
    for (int i = 0; i < destination; i++) {
        float *weights = axis->weights + (size_t)i * (size_t)axis->taps;
        if (scale > 1) {
            double start = i * scale, end = (i + 1) * scale;
            int first = (int)floor(start), n = 0;
            double total = 0;
            for (int s = first; s < end && s < length && n < axis->taps; s++, n++) {
                double covered = fmin(end, s + 1) - fmax(start, s);
                weights[n] = (float)covered;
                total += covered;
            }
            for (int k = 0; k < n; k++) weights[k] = (float)(weights[k] / total);
            axis->first[i] = offset + first;
            axis->count[i] = n;
        } else {
            double centre = (i + 0.5) * scale - 0.5;
            if (centre < 0) centre = 0;
            if (centre > length - 1) centre = length - 1;
            int left = (int)floor(centre);
            double fraction = centre - left;
            axis->first[i] = offset + left;
            if (left + 1 < length && fraction > 0) {
                weights[0] = (float)(1 - fraction);
                weights[1] = (float)fraction;
                axis->count[i] = 2;
            } else {
                weights[0] = 1;
                axis->count[i] = 1;
            }
        }
    }
    return 0;
}

int tr_image_resample(const unsigned char *source, int source_width, int source_height,
                      int x, int y, int width, int height,
                      unsigned char *destination, int destination_width, int destination_height) {
    if (source == NULL || destination == NULL || width <= 0 || height <= 0 || destination_width <= 0 || destination_height <= 0
        || x < 0 || y < 0 || x > source_width - width || y > source_height - height) {
        return TR_IMAGE_INVALID_ARGUMENT;
    }
    struct tr_axis across = {0}, down = {0};
    /* The rectangle's rows, resampled across: height × destination_width pixels. */
    float *rows = malloc(sizeof(float) * 3 * (size_t)height * (size_t)destination_width);
    if (rows == NULL || tr_axis_make(&across, x, width, destination_width) != 0 || tr_axis_make(&down, 0, height, destination_height) != 0) {
        free(rows);
        tr_axis_free(&across);
        tr_axis_free(&down);
        return TR_IMAGE_NO_MEMORY;
    }
    for (int row = 0; row < height; row++) {
        const unsigned char *line = source + ((size_t)(y + row) * (size_t)source_width) * 3;
        float *out = rows + (size_t)row * (size_t)destination_width * 3;
        for (int i = 0; i < destination_width; i++) {
            const float *weights = across.weights + (size_t)i * (size_t)across.taps;
            float r = 0, g = 0, b = 0;
            for (int k = 0; k < across.count[i]; k++) {
                const unsigned char *pixel = line + (size_t)(across.first[i] + k) * 3;
                r += weights[k] * pixel[0];
                g += weights[k] * pixel[1];
                b += weights[k] * pixel[2];
            }
            out[i * 3] = r;
            out[i * 3 + 1] = g;
            out[i * 3 + 2] = b;
        }
    }
    for (int j = 0; j < destination_height; j++) {
        const float *weights = down.weights + (size_t)j * (size_t)down.taps;
        unsigned char *out = destination + (size_t)j * (size_t)destination_width * 3;
        for (int i = 0; i < destination_width * 3; i++) {
            float value = 0;
            for (int k = 0; k < down.count[j]; k++) value += weights[k] * rows[(size_t)(down.first[j] + k) * (size_t)destination_width * 3 + i];
            value += 0.5f;
            out[i] = value <= 0 ? 0 : value >= 255 ? 255 : (unsigned char)value;
        }
    }
    free(rows);
    tr_axis_free(&across);
    tr_axis_free(&down);
    return TR_IMAGE_OK;
}
