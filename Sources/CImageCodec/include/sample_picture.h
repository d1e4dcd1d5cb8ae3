#ifndef TOPREGIONS_SAMPLE_PICTURE_H
#define TOPREGIONS_SAMPLE_PICTURE_H

/// The geometric figures a picture can hold over its gradient.
enum {
    /// Concentric rings around the centre.
    TR_MOTIF_RINGS = 0,
    /// A sun over layered hills (`count` layers).
    TR_MOTIF_HILLS = 1,
    /// A halftone grid of dots, largest at the centre.
    TR_MOTIF_DOTS = 2,
    /// A disc filled with stripes of the two colours.
    TR_MOTIF_STRIPES = 3,
    /// Square tiles gathered around the centre.
    TR_MOTIF_MOSAIC = 4,
    /// Translucent overlapping circles on an arc.
    TR_MOTIF_ORBS = 5,
    TR_MOTIF_COUNT = 6,
};

/// What a picture looks like. The scene is 4:3, `u` from 0 to 4/3 across and `v` from 0
/// to 1 down; a canvas of another shape shows its centre, as Flickr's square crops do.
/// Colours are RGB from 0 to 1.
typedef struct {
    float from[3];
    float to[3];
    /// The gradient's direction, in radians.
    float angle;
    int motif;
    float accent[3];
    float second[3];
    /// The motif's centre, in scene units.
    float x;
    float y;
    /// The motif's extent, in scene units.
    float size;
    float rotation;
    int count;
    unsigned int seed;
} tr_picture;

/// Draws the picture into width × height RGB pixels (anti-aliased edges, a soft vignette).
/// Returns 0, or -1 for an empty canvas or a failed allocation.
int tr_picture_render(const tr_picture *picture, unsigned char *rgb, int width, int height);

#endif
