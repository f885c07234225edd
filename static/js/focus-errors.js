/* After an htmx form submission swaps in an error summary (`error_summary` in macros.html), move
 * focus to it as `autofocus` does on a full page load. Summaries already on the page, or brought
 * in by a poll (GET), are left alone so a refresh never pulls focus away from someone's work. */
(function () {
  'use strict';

  const SUMMARY = '.error-summary';
  const markSeen = () => {
    document.querySelectorAll(SUMMARY).forEach((el) => { el.dataset.seen = '1'; });
  };

  document.addEventListener('DOMContentLoaded', markSeen);

  document.addEventListener('htmx:after:swap', (event) => {
    const fresh = Array.from(document.querySelectorAll(SUMMARY)).filter((el) => !el.dataset.seen);
    markSeen();
    const request = event.detail && event.detail.ctx && event.detail.ctx.request;
    const method = ((request && request.method) || 'GET').toUpperCase();
    if (fresh.length && method !== 'GET') fresh[0].focus();
  });
})();
