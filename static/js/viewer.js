/* Read-only diagrams (a version, or both sides of a comparison) with coloured markers.
 * Each `[data-viewer=ID]` container is filled from the JSON script #ID: {xml, marks: {id: status}}. */
(function () {
  'use strict';
  if (typeof BpmnJS === 'undefined') return;
  const viewers = {};
  document.querySelectorAll('[data-viewer]').forEach(async (container) => {
    const source = document.getElementById(container.dataset.viewer);
    if (!source) return;
    const data = JSON.parse(source.textContent);
    const viewer = new BpmnJS({ container: container });
    viewers[container.dataset.viewer] = viewer;
    try {
      await viewer.importXML(data.xml);
    } catch (error) {
      container.textContent = `The diagram could not be drawn: ${error.message}`;
      return;
    }
    const canvas = viewer.get('canvas');
    const registry = viewer.get('elementRegistry');
    canvas.zoom('fit-viewport', 'auto');
    if (canvas.zoom() > 1) canvas.zoom(1, 'auto');
    Object.entries(data.marks || {}).forEach(([id, status]) => {
      if (registry.get(id)) canvas.addMarker(id, `diff-${status}`);
    });
    container.dataset.ready = 'true';
  });
  window.viewers = viewers;
}());
