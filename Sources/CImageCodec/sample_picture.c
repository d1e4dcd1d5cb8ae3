#include "sample_picture.h"

#include <math.h>
#include <stdlib.h>

/* Pictures for SampleData's photos, drawn per pixel from signed distances: an edge is
   covered in proportion to how far the pixel's centre is inside it, which anti-aliases
   every figure at every size without supersampling. A figure is evaluated only on the
   span of each row its bounding circle crosses; elsewhere a pixel is the gradient and the
   vignette, both linear along a row. Tests draw every SampleData photo at every size in
   debug builds (unoptimised C), hence the care. */

#define TR_INLINE static inline __attribute__((always_inline))

static const float tr_pi = 3.14159265f;

TR_INLINE float tr_clamp(float value, float low, float high) {
    return value < low ? low : value > high ? high : value;
}

TR_INLINE float tr_length(float x, float y) {
    return sqrtf(x * x + y * y);
}

/* How much of a pixel lies inside a figure whose signed distance (negative inside) at the
   pixel's centre is `distance`; `pixel` is a pixel's width in scene units. */
TR_INLINE float tr_cover(float distance, float pixel) {
    return tr_clamp(0.5f - distance / pixel, 0, 1);
}

TR_INLINE void tr_blend(float colour[3], const float over[3], float alpha) {
    colour[0] += (over[0] - colour[0]) * alpha;
    colour[1] += (over[1] - colour[1]) * alpha;
    colour[2] += (over[2] - colour[2]) * alpha;
}

/* A well-mixed 32-bit hash (lowbias32): tiles, orbs and hills vary by it, reproducibly. */
static unsigned int tr_hash(unsigned int value) {
    value ^= value >> 16;
    value *= 0x7feb352dU;
    value ^= value >> 15;
    value *= 0x846ca68bU;
    value ^= value >> 16;
    return value;
}

static float tr_unit(unsigned int seed, unsigned int salt) {
    return (float)(tr_hash(seed ^ tr_hash(salt)) & 0xFFFFFF) / 16777216.0f;
}

/* The distance to the nearest band of a pattern repeating every `period`, bands covering
   the first `duty` of each period; negative inside a band. */
TR_INLINE float tr_band(float position, float period, float duty) {
    float f = position / period - floorf(position / period);
    if (f < duty) return -fminf(f, duty - f) * period;
    return fminf(f - duty, 1 - f) * period;
}

/* What the pixels share: the rotation's sine and cosine, the orbs, the hills' layers. */
struct tr_scene {
    const tr_picture *p;
    float pixel;
    float cs, sn;
    int count;
    int orbs;
    float orb_x[8], orb_y[8], orb_radius[8];
    int layers;
    float shade[4][3];
    /* The motif's bounding circle (the sun's, for hills). */
    float bound;
};

static void tr_rings(const struct tr_scene *s, float u, float v, float colour[3]) {
    const tr_picture *p = s->p;
    float distance = tr_length(u - p->x, v - p->y);
    float spacing = p->size / s->count;
    /* Ring n is centred on n spacings, half a spacing wide (ring 0 is a disc); the last
       ends inside `size`. */
    float offset = distance / spacing - floorf(distance / spacing + 0.5f);
    float inside = tr_cover((fabsf(offset) - 0.25f) * spacing, s->pixel) * tr_cover(distance - (s->count - 0.5f) * spacing, s->pixel);
    if (inside <= 0) return;
    int ring = (int)(distance / spacing + 0.5f);
    tr_blend(colour, ring % 3 == 2 ? p->second : p->accent, 0.85f * inside);
}

static void tr_sun(const struct tr_scene *s, float u, float v, float colour[3]) {
    const tr_picture *p = s->p;
    float radius = p->size * 0.3f;
    float distance = tr_length(u - p->x, v - p->y);
    float halo = tr_clamp(1 - (distance - radius) / radius, 0, 1);
    tr_blend(colour, p->accent, 0.3f * halo * halo);
    tr_blend(colour, p->accent, tr_cover(distance - radius, s->pixel));
}

static void tr_dots(const struct tr_scene *s, float u, float v, float colour[3]) {
    const tr_picture *p = s->p;
    float spacing = p->size / s->count;
    float dx = u - p->x, dy = v - p->y;
    float qx = dx * s->cs + dy * s->sn, qy = -dx * s->sn + dy * s->cs;
    float cx = (floorf(qx / spacing) + 0.5f) * spacing, cy = (floorf(qy / spacing) + 0.5f) * spacing;
    float scale = tr_clamp(1 - tr_length(cx, cy) / (p->size * 1.1f), 0, 1);
    float radius = spacing * 0.46f * scale;
    if (radius <= 0) return;
    tr_blend(colour, p->accent, 0.9f * tr_cover(tr_length(qx - cx, qy - cy) - radius, s->pixel));
}

static void tr_stripes(const struct tr_scene *s, float u, float v, float colour[3]) {
    const tr_picture *p = s->p;
    float disc = tr_cover(tr_length(u - p->x, v - p->y) - p->size, s->pixel);
    if (disc <= 0) return;
    float period = 2 * p->size / s->count;
    float across = (u - p->x) * s->cs + (v - p->y) * s->sn + p->size;
    float band = tr_cover(tr_band(across, period, 0.5f), s->pixel);
    float stripe[3];
    for (int c = 0; c < 3; c++) stripe[c] = p->second[c] + (p->accent[c] - p->second[c]) * band;
    tr_blend(colour, stripe, 0.92f * disc);
}

static void tr_mosaic(const struct tr_scene *s, float u, float v, float colour[3]) {
    const tr_picture *p = s->p;
    float spacing = 1.0f / s->count;
    float qx = u * s->cs + v * s->sn, qy = -u * s->sn + v * s->cs;
    float fx = floorf(qx / spacing), fy = floorf(qy / spacing);
    float cx = (fx + 0.5f) * spacing, cy = (fy + 0.5f) * spacing;
    /* The tile's centre back in the scene: tiles thin out away from the motif's centre. */
    float ux = cx * s->cs - cy * s->sn, uy = cx * s->sn + cy * s->cs;
    float fade = tr_clamp(1.2f - tr_length(ux - p->x, uy - p->y) / p->size, 0, 1);
    if (fade <= 0) return;
    unsigned int cell = (unsigned int)((int)fx * 7919 + (int)fy * 104729);
    float mix = tr_unit(p->seed, cell), strength = 0.45f + 0.5f * tr_unit(p->seed, cell + 1);
    float edge = fmaxf(fabsf(qx - cx), fabsf(qy - cy)) - spacing * 0.4f;
    float tile[3];
    for (int c = 0; c < 3; c++) tile[c] = p->accent[c] + (p->second[c] - p->accent[c]) * mix;
    tr_blend(colour, tile, strength * fade * tr_cover(edge, s->pixel));
}

static void tr_orbs(const struct tr_scene *s, float u, float v, float colour[3]) {
    for (int i = 0; i < s->orbs; i++) {
        float alpha = tr_cover(tr_length(u - s->orb_x[i], v - s->orb_y[i]) - s->orb_radius[i], s->pixel);
        if (alpha > 0) tr_blend(colour, i % 2 ? s->p->second : s->p->accent, 0.55f * alpha);
    }
}

static void tr_scene_prepare(struct tr_scene *s, const tr_picture *p, float pixel) {
    s->p = p;
    s->pixel = pixel;
    s->cs = cosf(p->rotation);
    s->sn = sinf(p->rotation);
    s->count = p->count < 2 ? 2 : p->count > 64 ? 64 : p->count;
    s->orbs = s->count > 8 ? 8 : s->count;
    s->layers = p->count < 1 ? 1 : p->count > 4 ? 4 : p->count;
    float reach = 0;
    for (int i = 0; i < s->orbs; i++) {
        float angle = p->rotation + i * 1.7f * tr_pi / s->orbs;
        s->orb_x[i] = p->x + cosf(angle) * p->size * 0.55f;
        s->orb_y[i] = p->y + sinf(angle) * p->size * 0.4f;
        s->orb_radius[i] = p->size * (0.22f + 0.2f * tr_unit(p->seed, (unsigned int)i));
        reach = fmaxf(reach, tr_length(s->orb_x[i] - p->x, s->orb_y[i] - p->y) + s->orb_radius[i]);
    }
    for (int layer = 0; layer < s->layers; layer++) {
        float dark = 0.15f + 0.5f * layer / (s->layers > 1 ? s->layers - 1 : 1);
        for (int c = 0; c < 3; c++) s->shade[layer][c] = p->second[c] * (1 - dark);
    }
    switch (p->motif) {
    case TR_MOTIF_HILLS: s->bound = p->size * 0.6f; break;
    case TR_MOTIF_DOTS: s->bound = p->size * 1.1f; break;
    case TR_MOTIF_MOSAIC: s->bound = p->size * 1.2f + 1.0f / s->count; break;
    case TR_MOTIF_ORBS: s->bound = reach; break;
    default: s->bound = p->size; break;
    }
    s->bound += 2 * pixel;
}

/* The hills' outlines: a height per column and layer, two sines each. */
static float *tr_hill_heights(const struct tr_scene *s, int width) {
    float *heights = malloc(sizeof(float) * (size_t)width * (size_t)s->layers);
    if (heights == NULL) return NULL;
    for (int x = 0; x < width; x++) {
        float u = 2.0f / 3 + (x + 0.5f - width * 0.5f) * s->pixel;
        for (int layer = 0; layer < s->layers; layer++) {
            float phase = tr_unit(s->p->seed, 100u + (unsigned int)layer) * 2 * tr_pi;
            float frequency = 1.2f + 1.5f * tr_unit(s->p->seed, 200u + (unsigned int)layer);
            float amplitude = 0.05f + 0.04f * tr_unit(s->p->seed, 300u + (unsigned int)layer);
            heights[(size_t)x * (size_t)s->layers + (size_t)layer] = 0.55f + 0.13f * layer
                + amplitude * sinf(frequency * 2 * tr_pi * u + phase) + amplitude * 0.4f * sinf(frequency * 5.3f * u + phase * 2);
        }
    }
    return heights;
}

int tr_picture_render(const tr_picture *picture, unsigned char *rgb, int width, int height) {
    if (picture == NULL || rgb == NULL || width <= 0 || height <= 0) return -1;
    /* Pixels per scene unit, covering the canvas (a square shows the scene's centre). */
    float pixel = 1 / fmaxf(width * 0.75f, (float)height);
    struct tr_scene scene;
    tr_scene_prepare(&scene, picture, pixel);
    float dx = cosf(picture->angle), dy = sinf(picture->angle);
    float extent = fabsf(dx) * (2.0f / 3) + fabsf(dy) * 0.5f;
    float *heights = NULL, *across = malloc(sizeof(float) * (size_t)width);
    if (across == NULL) return -1;
    if (picture->motif == TR_MOTIF_HILLS && (heights = tr_hill_heights(&scene, width)) == NULL) {
        free(across);
        return -1;
    }
    /* The vignette's share of each column. */
    float left = 2.0f / 3 + (0.5f - width * 0.5f) * pixel;
    for (int x = 0; x < width; x++) {
        float ru = (left + x * pixel - 2.0f / 3) * 1.5f;
        across[x] = ru * ru;
    }
    float slope = dx * pixel / extent * 0.5f;
    for (int y = 0; y < height; y++) {
        float v = 0.5f + (y + 0.5f - height * 0.5f) * pixel;
        float rv = (v - 0.5f) * 2;
        float down = rv * rv;
        float t = (((left - 2.0f / 3) * dx + (v - 0.5f) * dy) / extent + 1) * 0.5f;
        /* The columns the motif's bounding circle crosses on this row. */
        int first = width, last = -1;
        float rise = v - picture->y, half = scene.bound * scene.bound - rise * rise;
        if (half > 0) {
            half = sqrtf(half);
            first = (int)floorf((picture->x - half - left) / pixel);
            last = (int)ceilf((picture->x + half - left) / pixel);
        }
        unsigned char *out = rgb + (size_t)y * (size_t)width * 3;
        for (int x = 0; x < width; x++, t += slope) {
            float mix = tr_clamp(t, 0, 1);
            float colour[3] = {
                picture->from[0] + (picture->to[0] - picture->from[0]) * mix,
                picture->from[1] + (picture->to[1] - picture->from[1]) * mix,
                picture->from[2] + (picture->to[2] - picture->from[2]) * mix,
            };
            if (x >= first && x <= last) {
                float u = left + x * pixel;
                switch (picture->motif) {
                case TR_MOTIF_RINGS: tr_rings(&scene, u, v, colour); break;
                case TR_MOTIF_HILLS: tr_sun(&scene, u, v, colour); break;
                case TR_MOTIF_DOTS: tr_dots(&scene, u, v, colour); break;
                case TR_MOTIF_STRIPES: tr_stripes(&scene, u, v, colour); break;
                case TR_MOTIF_MOSAIC: tr_mosaic(&scene, u, v, colour); break;
                default: tr_orbs(&scene, u, v, colour); break;
                }
            }
            if (heights != NULL) {
                const float *column = heights + (size_t)x * (size_t)scene.layers;
                for (int layer = 0; layer < scene.layers; layer++) {
                    if (v + pixel > column[layer]) tr_blend(colour, scene.shade[layer], tr_cover(column[layer] - v, pixel));
                }
            }
            float light = 255 * (1 - 0.16f * (across[x] + down));
            for (int c = 0; c < 3; c++) {
                float value = colour[c] * light + 0.5f;
                out[x * 3 + c] = value <= 0 ? 0 : value >= 255 ? 255 : (unsigned char)value;
            }
        }
    }
    free(heights);
    free(across);
    return 0;
}
