/* Read-only diagrams for operations pages (bpmn-js NavigatedViewer).
 * Each `[data-instance-viewer]` container draws the XML from the JSON script named by
 * `data-source` ({xml, heat?}). With `data-state`, it marks what the JSON script of that id holds
 * ({visited: [ids], active: {id: n}, failed: {id: message}, cancelled: {id: n},
 * multi: {id: {done, total}}, calls: {id: {href, text, count}}, awaits: {id: what it waits for}})
 * and marks again whenever the server replaces that script (the live poll swaps its region).
 * Overlay content is built from DOM text nodes, never HTML strings, so nothing from the server is
 * parsed as markup. Drawing itself is viewer.js's `flowdeskDiagram`. Nodes inside sub-processes
 * are marked by their own ids: on the main plane when expanded, on the sub-process's own plane
 * (opened by its drill-down button) when collapsed. */
(function () {
  'use strict';
  if (typeof window.flowdeskDiagram === 'undefined') return;

  const MARKERS = ['op-visited', 'op-active', 'op-failed', 'op-cancelled'];
  const viewers = {};

  function readJson(id) {
    const element = id && document.getElementById(id);
    if (!element) return null;
    try {
      return JSON.parse(element.textContent);
    } catch (error) {
      return null;
    }
  }

  function badge(text, className) {
    const element = document.createElement('div');
    element.className = className ? `op-badge ${className}` : 'op-badge';
    element.textContent = text;
    return element;
  }

  /* What a person calls the node: its name on the diagram, else its id. */
  function nodeName(element) {
    const name = element.businessObject && element.businessObject.name;
    return (name && name.replace(/\s+/g, ' ').trim()) || element.id;
  }

  function setTitle(canvas, id, text) {
    const group = canvas.getGraphics(id);
    if (!group) return;
    group.querySelectorAll(':scope > title.op-title').forEach((old) => old.remove());
    if (!text) return;
    const title = document.createElementNS('http://www.w3.org/2000/svg', 'title');
    title.setAttribute('class', 'op-title');
    title.textContent = text;
    group.insertBefore(title, group.firstChild);
  }

  function failedBadge(message) {
    const element = badge('!', 'op-badge-failed');
    element.tabIndex = 0;
    element.setAttribute('role', 'img');
    element.setAttribute('aria-label', `Failed: ${message}`);
    const tip = document.createElement('span');
    tip.className = 'op-tip';
    tip.textContent = message;
    element.appendChild(tip);
    return element;
  }

  function mark(viewer, state) {
    const canvas = viewer.get('canvas');
    const registry = viewer.get('elementRegistry');
    const overlays = viewer.get('overlays');
    registry.getAll().forEach((element) => {
      MARKERS.forEach((marker) => canvas.removeMarker(element.id, marker));
      setTitle(canvas, element.id, '');
    });
    overlays.remove({ type: 'op-token' });
    overlays.remove({ type: 'op-failed' });
    overlays.remove({ type: 'op-cancelled' });
    overlays.remove({ type: 'op-multi' });
    overlays.remove({ type: 'op-call' });
    (state.visited || []).forEach((id) => {
      if (registry.get(id)) canvas.addMarker(id, 'op-visited');
    });
    Object.entries(state.active || {}).forEach(([id, count]) => {
      const element = registry.get(id);
      if (!element) return;
      const tokens = Number(count) || 0;
      const html = badge(String(tokens));
      html.setAttribute('role', 'img');
      const awaits = state.awaits && state.awaits[id] ? ` for ${String(state.awaits[id])}` : '';
      html.setAttribute('aria-label', `${tokens} token${tokens === 1 ? '' : 's'} waiting at ${nodeName(element)}${awaits}`);
      if (awaits) setTitle(canvas, id, `Waiting${awaits}`);
      canvas.addMarker(id, 'op-active');
      overlays.add(id, 'op-token', { position: { top: -11, right: 11 }, html: html });
    });
    Object.entries(state.cancelled || {}).forEach(([id, count]) => {
      if (!registry.get(id)) return;
      const text = `Stopped here by the cancel (${Number(count) || 1} token${count > 1 ? 's' : ''})`;
      canvas.addMarker(id, 'op-cancelled');
      setTitle(canvas, id, text);
      const element = badge('\u00d7', 'op-badge-cancelled');
      element.setAttribute('role', 'img');
      element.setAttribute('aria-label', text);
      overlays.add(id, 'op-cancelled', { position: { top: -11, right: 11 }, html: element });
    });
    Object.entries(state.multi || {}).forEach(([id, progress]) => {
      if (!registry.get(id)) return;
      const done = Number(progress.done) || 0;
      const total = Number(progress.total) || 0;
      const element = badge(`${done}/${total}`, 'op-badge-multi');
      element.setAttribute('role', 'img');
      element.setAttribute('aria-label', `Multi-instance: ${done} of ${total} done`);
      overlays.add(id, 'op-multi', { position: { bottom: 11, right: 11 }, html: element });
    });
    Object.entries(state.calls || {}).forEach(([id, call]) => {
      if (!registry.get(id) || !call.href) return;
      const link = document.createElement('a');
      link.className = 'op-badge op-badge-call';
      link.href = call.href;
      link.textContent = Number(call.count) > 1 ? `${Number(call.count)} called` : `#${Number(call.latest)}`;
      link.setAttribute('aria-label', String(call.text || 'Called instance'));
      overlays.add(id, 'op-call', { position: { bottom: 11, left: -11 }, html: link });
    });
    Object.entries(state.failed || {}).forEach(([id, message]) => {
      if (!registry.get(id)) return;
      const text = String(message || 'failed');
      canvas.addMarker(id, 'op-failed');
      setTitle(canvas, id, text);
      overlays.add(id, 'op-failed', { position: { top: -11, left: -11 }, html: failedBadge(text) });
    });
  }

  function heat(viewer, nodes) {
    const canvas = viewer.get('canvas');
    const registry = viewer.get('elementRegistry');
    const overlays = viewer.get('overlays');
    Object.entries(nodes || {}).forEach(([id, info]) => {
      if (!registry.get(id)) return;
      const label = document.createElement('div');
      label.className = 'op-heat-label';
      const parts = [];
      if (info.waiting) {
        canvas.addMarker(id, 'op-active');
        parts.push(`${info.waiting} waiting · median ${info.median} · max ${info.longest}`);
      }
      if (info.failed) {
        canvas.addMarker(id, 'op-failed');
        label.classList.add('op-heat-failed');
        parts.push(`${info.failed} failed`);
      }
      label.textContent = parts.join(' · ');
      setTitle(canvas, id, label.textContent);
      overlays.add(id, 'op-heat', { position: { bottom: -6, left: 0 }, html: label });
    });
  }

  function watch(viewer, stateId) {
    let last = (document.getElementById(stateId) || {}).textContent;
    new MutationObserver(() => {
      const current = document.getElementById(stateId);
      if (!current || current.textContent === last) return;
      last = current.textContent;
      const state = readJson(stateId);
      if (state) mark(viewer, state);
    }).observe(document.querySelector('main') || document.body, { childList: true, subtree: true });
  }

  document.querySelectorAll('[data-instance-viewer]').forEach(async (container) => {
    const data = readJson(container.dataset.source);
    if (!data) return;
    const viewer = await window.flowdeskDiagram(container, data.xml);
    if (!viewer) return;
    viewers[container.dataset.source] = viewer;
    if (data.heat) heat(viewer, data.heat);
    if (container.dataset.state) {
      const state = readJson(container.dataset.state);
      if (state) mark(viewer, state);
      watch(viewer, container.dataset.state);
    }
    container.dataset.ready = 'true';
  });
  window.instanceViewers = viewers;
}());
