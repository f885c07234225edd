/* Inbox: when the navigation badge's count changes (it refreshes every minute), reload the task
 * list and its tab counts too, unless the person is typing a filter name in that list. The list
 * carries the counts it was drawn with, so a task that arrives before the badge's first load
 * still refreshes it. */
(function () {
  'use strict';

  const counts = (id) => {
    const element = document.getElementById(id);
    return element ? element.getAttribute('data-counts') : null;
  };
  let last = null;

  document.addEventListener('DOMContentLoaded', () => {
    last = counts('task-list') || counts('inbox-count');
  });

  document.addEventListener('htmx:after:swap', () => {
    const now = counts('inbox-count');
    if (now === null || now === last) return;
    const first = last === null;
    last = now;
    if (first) return;
    const list = document.getElementById('task-list');
    const name = document.getElementById('filter-name');
    if (!list || (name && (name.value || document.activeElement === name))) return;
    list.dispatchEvent(new CustomEvent('inbox-changed'));
  });
})();
