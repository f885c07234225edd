/* Visible zoom controls for a bpmn-js canvas (zoom in, zoom out, fit, 100 %) and a fit that keeps
 * a margin round the drawing, shared by the designer and the read-only diagrams.
 * `flowdeskZoom.fit(canvas, {left})` fits (never above 100 %) clear of `left` pixels (a palette);
 * `flowdeskZoom.controls(canvas, container, fit)` adds the buttons at the container's top right
 * (the bottom right belongs to the bpmn.io watermark). */
(function () {
  'use strict';
  const STEP = 1.25;
  const MIN = 0.2;
  const MAX = 4;
  const PAD = 32;

  function fit(canvas, options) {
    const left = (options && options.left) || 0;
    const { inner, outer } = canvas.viewbox();
    if (!inner.width || !inner.height || !outer.width || !outer.height) return;
    const scale = Math.max(MIN, Math.min(
      1, (outer.width - left - 2 * PAD) / inner.width, (outer.height - 2 * PAD) / inner.height,
    ));
    const room = outer.width / scale - inner.width - left / scale;
    canvas.viewbox({
      x: inner.x - left / scale - Math.max(PAD / scale, room / 2),
      y: inner.y - (outer.height / scale - inner.height) / 2,
      width: outer.width / scale,
      height: outer.height / scale,
    });
  }

  function controls(canvas, container, fitDiagram) {
    const centre = () => {
      const { outer } = canvas.viewbox();
      return { x: outer.width / 2, y: outer.height / 2 };
    };
    const zoomBy = (factor) => {
      canvas.zoom(Math.max(MIN, Math.min(MAX, canvas.zoom() * factor)), centre());
    };
    const bar = document.createElement('div');
    bar.className = 'zoom-controls';
    bar.setAttribute('role', 'toolbar');
    bar.setAttribute('aria-label', 'Zoom');
    [
      ['zoom-in', '+', 'Zoom in', () => zoomBy(STEP)],
      ['zoom-out', '−', 'Zoom out', () => zoomBy(1 / STEP)],
      ['zoom-fit', 'Fit', 'Fit the diagram', () => fitDiagram()],
      ['zoom-reset', '100 %', 'Reset zoom to 100 %', () => canvas.zoom(1, 'auto')],
    ].forEach(([action, text, name, run]) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.zoom = action;
      button.textContent = text;
      button.title = name;
      button.setAttribute('aria-label', name);
      button.addEventListener('click', run);
      bar.appendChild(button);
    });
    container.appendChild(bar);
    return bar;
  }

  window.flowdeskZoom = { fit: fit, controls: controls };
}());
