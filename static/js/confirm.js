// Forms marked data-confirm ask before they submit (used by destructive buttons such as the
// outline's Delete); without this script they submit as before.
(function () {
  'use strict';

  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  }, true);
})();
