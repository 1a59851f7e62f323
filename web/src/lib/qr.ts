// A QR code as one SVG path, computed in the page: the TOTP secret inside it is sent to no other origin (CONTRACT §3.6).

/** The code's modules: `size` squares a side, and the dark ones as a path in that unit grid. */
export type QrDrawing = { size: number; path: string };

/**
 * Loaded when someone enrolls, not with the dashboard: most visits never draw a QR code. A path rather than
 * a canvas or a data: URL: the dashboard's CSP allows neither inline styles nor data: images, and an SVG
 * scales sharply at any zoom.
 */
export async function drawQr(text: string): Promise<QrDrawing> {
  const { create } = await import('qrcode');
  const { size, data } = create(text, { errorCorrectionLevel: 'M' }).modules;
  const parts: string[] = [];
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) if (data[row * size + col]) parts.push(`M${String(col)} ${String(row)}h1v1h-1z`);
  }
  return { size, path: parts.join('') };
}
