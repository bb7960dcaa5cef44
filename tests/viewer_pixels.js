// Measures a screenshot for tests/viewer_test.sh, in headless Chromium: the page that
// loads this has <img id="shot"> (the PNG as a data: address, so the canvas can read it)
// and `CHECKS`, one measurement a line, and gets "NAME=VALUE ..." in <pre id="result">.
// Coordinates are the screenshot's pixels; colors are R G B with a tolerance per channel.
//   count NAME X0 Y0 X1 Y1 R G B TOL    pixels of the color in the box [X0, X1) x [Y0, Y1)
//   run NAME X0 Y0 X1 Y1 R G B TOL      the longest horizontal run of the color in the box
//   ring NAME CX CY RADIUS R G B TOL    pixels of the color within 2 px of the circle
//   hues NAME X0 Y0 X1 Y1 MIN           30-degree hue sectors with MIN or more vivid pixels
"use strict";
window.addEventListener("load", () => {
  const img = document.getElementById("shot"), c = document.createElement("canvas");
  const W = c.width = img.naturalWidth, H = c.height = img.naturalHeight;
  const g = c.getContext("2d");
  g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, W, H).data, out = [];
  const match = (x, y, rgb, tol) => {
    const i = 4 * (y * W + x);
    return Math.abs(d[i] - rgb[0]) <= tol && Math.abs(d[i + 1] - rgb[1]) <= tol && Math.abs(d[i + 2] - rgb[2]) <= tol;
  };
  const box = (a) => [Math.max(0, Math.round(a[0])), Math.max(0, Math.round(a[1])), Math.min(W, Math.round(a[2])), Math.min(H, Math.round(a[3]))];
  for (const line of CHECKS.trim().split("\n")) {
    const [kind, name, ...rest] = line.trim().split(/\s+/), a = rest.map(Number);
    let v = 0;
    if (kind === "count" || kind === "run") {
      const [x0, y0, x1, y1] = box(a), rgb = a.slice(4, 7), tol = a[7];
      for (let y = y0; y < y1; y++) {
        let length = 0;
        for (let x = x0; x < x1; x++) {
          if (match(x, y, rgb, tol)) { length++; if (kind === "count") v++; else v = Math.max(v, length); } else length = 0;
        }
      }
    } else if (kind === "ring") {
      const [cx, cy, r] = a, rgb = a.slice(3, 6), tol = a[6], [x0, y0, x1, y1] = box([cx - r - 3, cy - r - 3, cx + r + 4, cy + r + 4]);
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++)
        if (Math.abs(Math.hypot(x - cx, y - cy) - r) <= 2 && match(x, y, rgb, tol)) v++;
    } else if (kind === "hues") {
      const [x0, y0, x1, y1] = box(a), sectors = new Array(12).fill(0);
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) {
        const i = 4 * (y * W + x), r = d[i] / 255, gg = d[i + 1] / 255, b = d[i + 2] / 255;
        const max = Math.max(r, gg, b), min = Math.min(r, gg, b);
        if (max < 0.35 || max - min < 0.35 * max) continue; // dark or gray: not an agent's color
        let h = max === r ? (gg - b) / (max - min) : max === gg ? 2 + (b - r) / (max - min) : 4 + (r - gg) / (max - min);
        h = (h * 60 + 360) % 360;
        sectors[Math.floor(h / 30) % 12]++;
      }
      v = sectors.filter((n) => n >= a[4]).length;
    } else v = "unknown-check-" + kind;
    out.push(name + "=" + v);
  }
  document.getElementById("result").textContent = out.join(" ");
});
