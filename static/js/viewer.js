/* Read-only diagrams (bpmn-js NavigatedViewer) shared by the designer and operations pages.
 * `flowdeskDiagram(container, xml)` draws and fits a diagram (with a margin, and zoom buttons),
 * or says why it could not.
 * Each `[data-viewer=ID]` container is filled from the JSON script #ID: {xml, marks: {id: status}}
 * (a version, or both sides of a comparison). */
(function () {
  'use strict';
  if (typeof BpmnJS === 'undefined') {
    document.querySelectorAll('[data-viewer], [data-instance-viewer]').forEach((container) => {
      container.textContent = 'The diagram could not be drawn: its front-end files are missing on the server.';
    });
    return;
  }

  async function flowdeskDiagram(container, xml) {
    const viewer = new BpmnJS({ container: container });
    try {
      await viewer.importXML(xml);
    } catch (error) {
      container.textContent = `The diagram could not be drawn: ${error.message}`;
      return null;
    }
    const canvas = viewer.get('canvas');
    if (window.flowdeskZoom) {
      const fitDiagram = () => window.flowdeskZoom.fit(canvas);
      fitDiagram();
      window.flowdeskZoom.controls(canvas, container, fitDiagram);
    } else {
      canvas.zoom('fit-viewport', 'auto');
      if (canvas.zoom() > 1) canvas.zoom(1, 'auto');
    }
    return viewer;
  }
  window.flowdeskDiagram = flowdeskDiagram;

  const viewers = {};
  document.querySelectorAll('[data-viewer]').forEach(async (container) => {
    const source = document.getElementById(container.dataset.viewer);
    if (!source) return;
    const data = JSON.parse(source.textContent);
    const viewer = await flowdeskDiagram(container, data.xml);
    if (!viewer) return;
    viewers[container.dataset.viewer] = viewer;
    const canvas = viewer.get('canvas');
    const registry = viewer.get('elementRegistry');
    Object.entries(data.marks || {}).forEach(([id, status]) => {
      if (registry.get(id)) canvas.addMarker(id, `diff-${status}`);
    });
    container.dataset.ready = 'true';
  });
  window.viewers = viewers;
}());
