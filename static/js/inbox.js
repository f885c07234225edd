/* Inbox: when the navigation badge's count changes (it refreshes every minute), reload the task
 * list and its tab counts too, unless the person is typing a filter name in that list. */
(function () {
  'use strict';

  const counts = () => {
    const badge = document.getElementById('inbox-count');
    return badge ? badge.getAttribute('title') : null;
  };
  let last = null;

  document.addEventListener('DOMContentLoaded', () => { last = counts(); });

  document.addEventListener('htmx:after:swap', () => {
    const now = counts();
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
