// The photo viewer's geometry, pure (Tests/Web/zoom.test.mjs): an image of `natural` size
// ({width, height}) drawn in a stage of `stage` size, scaled by `scale` and moved by (x, y)
// from the stage's top left corner (CSS `translate(x, y) scale(scale)`, origin 0 0).

/** The scale at which the whole image fills the stage along one side ("fit"; small images
 *  are enlarged to fill the space too). */
export function fitScale(natural, stage) {
  if (!natural.width || !natural.height || !stage.width || !stage.height) return 1;
  return Math.min(stage.width / natural.width, stage.height / natural.height);
}

/** How far one may zoom: from fit to 4 times the image's pixels, or 4 times fit for an
 *  image smaller than the stage. */
export function scaleLimits(natural, stage) {
  const fit = fitScale(natural, stage);
  return { min: fit, max: Math.max(4, fit * 4) };
}

/** The view kept inside the stage: an image narrower (or shorter) than the stage is
 *  centred that way; a larger one cannot be dragged past its edges. */
export function clampView(view, natural, stage) {
  const { min, max } = scaleLimits(natural, stage);
  const scale = Math.min(max, Math.max(min, view.scale));
  const place = (offset, length, room) => {
    const drawn = length * scale;
    if (drawn <= room) return (room - drawn) / 2;
    return Math.min(0, Math.max(room - drawn, offset));
  };
  return { scale, x: place(view.x, natural.width, stage.width), y: place(view.y, natural.height, stage.height) };
}

/** The image fitted and centred. */
export function fitView(natural, stage) {
  return clampView({ scale: fitScale(natural, stage), x: 0, y: 0 }, natural, stage);
}

/** Zooms to `scale` keeping the image's point under `point` (stage coordinates) where it is. */
export function zoomTo(view, scale, point, natural, stage) {
  const { min, max } = scaleLimits(natural, stage);
  const next = Math.min(max, Math.max(min, scale));
  const ratio = next / view.scale;
  return clampView({ scale: next, x: point.x - (point.x - view.x) * ratio, y: point.y - (point.y - view.y) * ratio }, natural, stage);
}

/** True when the view shows the image fitted (within rounding). */
export function isFitted(view, natural, stage) {
  return Math.abs(view.scale - fitScale(natural, stage)) < 1e-3 * Math.max(1, view.scale);
}

/**
 * Double-click or double-tap: from fit to 100 % (the image's own pixels) at `point`, and back.
 * An image whose own pixels are no larger than fit (a small image on a large screen) goes to
 * twice fit instead, so that the gesture always zooms in.
 */
export function toggleView(view, point, natural, stage) {
  if (!isFitted(view, natural, stage)) return fitView(natural, stage);
  const fit = fitScale(natural, stage);
  const target = fit < 0.9 ? 1 : fit * 2;
  return zoomTo(view, target, point, natural, stage);
}

/** One pinch step: the image's point under the fingers' first midpoint follows their midpoint
 *  now, scaled by how far apart they are compared with the start. */
export function pinchView(start, startMid, startDistance, mid, distance, natural, stage) {
  const { min, max } = scaleLimits(natural, stage);
  const scale = Math.min(max, Math.max(min, start.scale * (distance / Math.max(1, startDistance))));
  const px = (startMid.x - start.x) / start.scale, py = (startMid.y - start.y) / start.scale;
  return clampView({ scale, x: mid.x - px * scale, y: mid.y - py * scale }, natural, stage);
}
