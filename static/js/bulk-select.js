// The instance list's "select all on this page" box: shown only when this script runs (without
// it, rows are ticked one by one and the form works the same). It ticks or clears every row
// box of its form and shows "some" (indeterminate) when only part of them is ticked.
(function () {
  'use strict';

  function setUp(all) {
    const form = all.dataset.selectAll;
    const rows = () => Array.from(
      document.querySelectorAll(`input[type="checkbox"][name="ids"][form="${form}"]`));
    const sync = () => {
      const boxes = rows();
      const ticked = boxes.filter((box) => box.checked).length;
      all.checked = boxes.length > 0 && ticked === boxes.length;
      all.indeterminate = ticked > 0 && ticked < boxes.length;
    };
    if (rows().length === 0) return;
    all.hidden = false;
    all.addEventListener('change', () => {
      rows().forEach((box) => { box.checked = all.checked; });
      sync();
    });
    document.addEventListener('change', (event) => {
      if (event.target !== all && rows().includes(event.target)) sync();
    });
    sync();
  }

  function init() {
    document.querySelectorAll('input[data-select-all]').forEach(setUp);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
