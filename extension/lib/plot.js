// @ts-check
/**
 * The live relevance plot of the side panel, after Fig. 2 of Chakrabarti et al. (1999): one dot
 * per fetched page (x: the page's sequence number, i.e. time in pages fetched; y: its relevance)
 * and the moving average as a line, over a window that scrolls with the crawl. Clicking a dot
 * opens its page. The canvas carries `data-points` (dots drawn) and `data-total` (pages known).
 *
 * @module plot
 */

/** @typedef {import('./protocol.js').Page} Page */

const WINDOW = 400;
const AVERAGE_OVER = 25;
const PAD = { left: 40, right: 6, top: 16, bottom: 28 };
const DOT_COLOUR = 'rgba(30, 110, 200, 0.55)';
const MEAN_COLOUR = '#d0461e';
const DOT = 2.5;

export class RelevancePlot {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {(page: Page) => void} onOpen called with the page whose dot was clicked
   */
  constructor(canvas, onOpen) {
    this.canvas = canvas;
    /** @type {Page[]} */
    this.pages = [];
    /** @type {{x: number, y: number, page: Page}[]} dots drawn, in CSS pixels */
    this.dots = [];
    this.scheduled = false;
    canvas.addEventListener('click', (e) => {
      const hit = this.dotAt(e.offsetX, e.offsetY);
      if (hit) onOpen(hit);
    });
    canvas.addEventListener('mousemove', (e) => {
      const hit = this.dotAt(e.offsetX, e.offsetY);
      canvas.style.cursor = hit ? 'pointer' : 'default';
      canvas.title = hit ? `${hit.relevance.toFixed(3)}  ${hit.title || hit.url}` : '';
    });
    new ResizeObserver(() => this.redraw()).observe(canvas);
  }

  /** @param {Page[]} pages all known pages, oldest first */
  setPages(pages) {
    this.pages = pages.slice(-WINDOW * 2);
    this.redraw();
  }

  /** @param {Page[]} pages new pages, oldest first */
  addPages(pages) {
    const last = this.pages.length ? this.pages[this.pages.length - 1].seq : -Infinity;
    for (const p of pages) if (p.seq > last) this.pages.push(p);
    if (this.pages.length > WINDOW * 2) this.pages.splice(0, this.pages.length - WINDOW * 2);
    this.redraw();
  }

  /**
   * Draws soon, once for a burst of events (a timer rather than requestAnimationFrame, which
   * stops while the page is hidden; the plot must be current when it is shown again).
   */
  redraw() {
    if (this.scheduled) return;
    this.scheduled = true;
    setTimeout(() => { this.scheduled = false; this.draw(); }, 100);
  }

  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth || 300;
    const h = c.clientHeight || 150;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
    }
    const g = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const shown = this.pages.slice(-WINDOW);
    const x0 = shown.length ? shown[0].seq : 0;
    const x1 = Math.max(x0 + WINDOW - 1, shown.length ? shown[shown.length - 1].seq : 0);
    const px = (/** @type {number} */ seq) => PAD.left + ((seq - x0) / Math.max(1, x1 - x0)) * (w - PAD.left - PAD.right);
    const py = (/** @type {number} */ r) => h - PAD.bottom - clamp01(r) * (h - PAD.top - PAD.bottom);
    this.axes(g, w, h, x0, x1, py);
    this.dots = shown.map((p) => ({ x: px(p.seq), y: py(p.relevance), page: p }));
    g.fillStyle = DOT_COLOUR;
    for (const d of this.dots) {
      g.beginPath();
      g.arc(d.x, d.y, DOT, 0, 2 * Math.PI);
      g.fill();
    }
    // Moving average of relevance over the last AVERAGE_OVER pages (including earlier ones).
    const all = this.pages;
    const start = all.length - shown.length;
    let sum = 0;
    g.strokeStyle = MEAN_COLOUR;
    g.lineWidth = 2;
    g.beginPath();
    for (let i = 0; i < all.length; i++) {
      sum += clamp01(all[i].relevance);
      if (i >= AVERAGE_OVER) sum -= clamp01(all[i - AVERAGE_OVER].relevance);
      if (i < start) continue;
      const avg = sum / Math.min(i + 1, AVERAGE_OVER);
      if (i === start) g.moveTo(px(all[i].seq), py(avg)); else g.lineTo(px(all[i].seq), py(avg));
    }
    g.stroke();
    c.dataset.points = String(this.dots.length);
    c.dataset.total = String(this.pages.length);
  }

  /**
   * @param {CanvasRenderingContext2D} g
   * @param {number} w
   * @param {number} h
   * @param {number} x0
   * @param {number} x1
   * @param {(r: number) => number} py
   */
  axes(g, w, h, x0, x1, py) {
    // Mid grey: readable on the light and the dark panel.
    g.strokeStyle = '#8884';
    g.lineWidth = 1;
    g.fillStyle = '#888';
    g.font = '10px system-ui, sans-serif';
    for (const r of [0, 0.5, 1]) {
      g.beginPath();
      g.moveTo(PAD.left, py(r));
      g.lineTo(w - PAD.right, py(r));
      g.stroke();
      g.fillText(r.toFixed(1), PAD.left - 20, py(r) + 3);
    }
    // Axis titles.
    g.fillText(`${x0}`, PAD.left, h - 16);
    const right = `${x1}`;
    g.fillText(right, w - PAD.right - g.measureText(right).width, h - 16);
    // Say how much is shown: only the last WINDOW pages are plotted.
    const xTitle = x0 > 1 ? `the last ${x1 - x0 + 1} pages fetched (crawl order)`
      : `pages fetched (crawl order; the last ${x1 - x0 + 1} are shown)`;
    g.fillText(xTitle, PAD.left + (w - PAD.left - PAD.right - g.measureText(xTitle).width) / 2, h - 3);
    g.save();
    g.translate(10, PAD.top + (h - PAD.top - PAD.bottom) / 2);
    g.rotate(-Math.PI / 2);
    const yTitle = 'relevance R(d)';
    g.fillText(yTitle, -g.measureText(yTitle).width / 2, 0);
    g.restore();
    // Legend, top right: a dot per page, the line for the moving mean.
    const mean = `mean of last ${AVERAGE_OVER}`;
    let x = w - PAD.right - g.measureText(mean).width;
    g.fillText(mean, x, 10);
    x -= 18;
    g.strokeStyle = MEAN_COLOUR;
    g.lineWidth = 2;
    g.beginPath();
    g.moveTo(x, 7);
    g.lineTo(x + 14, 7);
    g.stroke();
    x -= g.measureText('page').width + 10;
    g.fillStyle = '#888';
    g.fillText('page', x, 10);
    g.fillStyle = DOT_COLOUR;
    g.beginPath();
    g.arc(x - 6, 7, DOT, 0, 2 * Math.PI);
    g.fill();
  }

  /**
   * @param {number} x
   * @param {number} y
   * @returns {Page | null} the page whose dot is under (x, y), if any
   */
  dotAt(x, y) {
    let best = null;
    let bestD = (DOT + 3) ** 2;
    for (const d of this.dots) {
      const dd = (d.x - x) ** 2 + (d.y - y) ** 2;
      if (dd <= bestD) { best = d.page; bestD = dd; }
    }
    return best;
  }
}

/** @param {number} x */
function clamp01(x) {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
