"""Driving pages in Chromium: the designer (open, select, the context pad, the properties panel,
save) and the axe-core accessibility audit."""

from __future__ import annotations

import time
from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


CLICK_TRAP_MS = 500  # diagram-js swallows the click right after a create/connect/append


FLOW_POINT = """([id, at]) => {
  const canvas = modeler.get('canvas');
  const element = modeler.get('elementRegistry').get(id);
  const box = canvas.viewbox();
  const rect = canvas.getContainer().getBoundingClientRect();
  let best = null, longest = -1;
  for (let i = 0; i < element.waypoints.length - 1; i++) {
    const a = element.waypoints[i], b = element.waypoints[i + 1];
    const length = Math.hypot(b.x - a.x, b.y - a.y);
    if (length > longest) {
      longest = length;
      best = {x: a.x + (b.x - a.x) * at, y: a.y + (b.y - a.y) * at};
    }
  }
  return {x: rect.left + (best.x - box.x) * box.scale, y: rect.top + (best.y - box.y) * box.scale};
}"""


def screenshot(page, name: str, full_page: bool = False) -> None:
    """Keep the caret: hiding it leaves `style=""` on inputs, which htmx copies into swapped
    content, and the Content-Security-Policy refuses that inline style."""
    page.screenshot(path=str(ARTIFACTS / name), full_page=full_page, caret="initial")


def open_designer(page, process_id: int) -> None:
    page.goto(f"/designer/{process_id}/")
    page.wait_for_selector("#designer[data-ready=true]")


def selected(page) -> list[str]:
    return page.evaluate("modeler.get('selection').get().map(e => e.id)")


def wait_selected(page, element_id: str) -> None:
    wait_until(page, f"modeler.get('selection').get().map(e => e.id).join() === '{element_id}'")


def click_shape(page, element_id: str) -> None:
    box = page.locator(f'.djs-shape[data-element-id="{element_id}"]').bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_selected(page, element_id)


def click_flow(page, flow_id: str, at: float = 0.3) -> None:
    """Select a flow by clicking its longest segment (not its middle: that is a drag handle)."""
    if selected(page) != [flow_id]:
        point = page.evaluate(FLOW_POINT, [flow_id, at])
        page.mouse.click(point["x"], point["y"])
        wait_selected(page, flow_id)


def pad(page, action: str) -> str:
    """Use a context-pad entry of the selected shape; returns what is selected afterwards."""
    page.click(f'.djs-context-pad .entry[data-action="{action}"]')
    page.wait_for_timeout(CLICK_TRAP_MS)
    return selected(page)[0] if selected(page) else ""


def panel_for(page, element_id: str):
    page.wait_for_selector(
        f"#props-form input[name=element_id][value='{element_id}']", state="attached"
    )
    return page.locator("#props")


def apply(page, text: str = "Applied") -> None:
    """Press Apply and wait until nothing typed in the panel is left to apply."""
    page.locator("#props").get_by_role("button", name="Apply").click()
    page.wait_for_selector(f"#panel-status:has-text('{text}')")
    wait_until(page, "!document.getElementById('save-status').textContent.includes('not applied')")


def save(page) -> int:
    page.click("#save-button")
    page.wait_for_selector("#save-status[data-tone=ok]")
    return int(page.get_attribute("#designer", "data-revision"))


def bo(page, element_id: str, expression: str):
    return page.evaluate(
        f"(() => {{ const bo = modeler.get('elementRegistry').get('{element_id}').businessObject; "
        f"return {expression}; }})()"
    )


AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def serious_violations(page, within: str = "") -> list[str]:
    """Serious and critical axe findings on the page (or inside the `within` selector)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(url="/static/vendor/axe-core/axe.min.js")
    result = page.evaluate(
        "([tags, within]) => axe.run(within ? document.querySelector(within) : document,"
        " {runOnly: {type: 'tag', values: tags}})",
        [AXE_TAGS, within],
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def shape_box(page, element_id: str) -> dict:
    return page.locator(f'.djs-shape[data-element-id="{element_id}"]').bounding_box()


def palette_click(page, action: str, x: float, y: float) -> str:
    """Click a palette entry, then the canvas at (x, y) as a person would; returns the new
    element's id (what is selected afterwards)."""
    page.click(f'.djs-palette .entry[data-action="{action}"]')
    page.mouse.move(x - 40, y - 30, steps=4)
    page.mouse.move(x, y, steps=6)
    page.mouse.click(x, y)
    page.wait_for_timeout(CLICK_TRAP_MS)
    return selected(page)[0] if selected(page) else ""


def pick(page, element_id: str) -> None:
    """Click a shape until it is selected: a click right after a drop or an autosave can be
    swallowed by the canvas (a person clicks again)."""
    box = shape_box(page, element_id)
    for _ in range(3):
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        try:
            wait_until(
                page, f"modeler.get('selection').get().map(e => e.id).join() === '{element_id}'", 2
            )
            return
        except AssertionError:
            page.wait_for_timeout(CLICK_TRAP_MS)
    wait_selected(page, element_id)


def connect(page, source: str, target: str) -> None:
    """Draw a sequence flow from `source` to `target` with the context pad's connect tool."""
    pick(page, source)
    page.click('.djs-context-pad .entry[data-action="connect"]')
    box = shape_box(page, target)
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x - 20, y, steps=5)
    page.mouse.move(x, y, steps=3)
    page.mouse.click(x, y)
    page.wait_for_timeout(CLICK_TRAP_MS)


def save_settled(page) -> int:
    """Save (after `wait_applied`: the edits are in the diagram) and wait until the status says
    everything is saved (an autosave may have done it already)."""
    page.click("#save-button")
    wait_until(
        page,
        "document.getElementById('save-status').dataset.tone === 'ok'"
        " && document.getElementById('save-status').textContent.startsWith('Saved')",
    )
    return int(page.get_attribute("#designer", "data-revision"))


# Every pair of shapes that overlap (a shape and what it contains excepted), and every flow
# that runs through a shape other than its own source and target (and their containers).
CLASHES = """() => {
  const shapes = modeler.get('elementRegistry').filter(e => !e.waypoints && e.type !== 'label'
    && e.parent && e.width !== undefined && !e.host);
  const inside = (outer, inner) => {
    for (let p = inner.parent; p; p = p.parent) if (p === outer) return true;
    return false;
  };
  const apart = (a, b) => a.x >= b.x + b.width || b.x >= a.x + a.width
    || a.y >= b.y + b.height || b.y >= a.y + a.height;
  const clashes = [];
  shapes.forEach((a, i) => shapes.slice(i + 1).forEach((b) => {
    if (!inside(a, b) && !inside(b, a) && !apart(a, b)) clashes.push(`${a.id} overlaps ${b.id}`);
  }));
  modeler.get('elementRegistry').filter(e => e.waypoints).forEach((flow) => {
    const points = flow.waypoints;
    shapes.forEach((shape) => {
      const ends = [flow.source, flow.target];
      if (ends.some((end) => end === shape || inside(shape, end))) return;
      const box = {x: shape.x + 2, y: shape.y + 2, width: shape.width - 4,
        height: shape.height - 4};
      for (let i = 0; i + 1 < points.length; i++) {
        const a = points[i], b = points[i + 1];
        const seg = {x: Math.min(a.x, b.x), y: Math.min(a.y, b.y),
          width: Math.abs(a.x - b.x), height: Math.abs(a.y - b.y)};
        if (!apart(seg, box)) { clashes.push(`${flow.id} runs through ${shape.id}`); return; }
      }
    });
  });
  return clashes;
}"""


def clashes(page) -> list[str]:
    return page.evaluate(CLASHES)


# Reports every Content-Security-Policy violation of every page of the context to the test.
REPORT_VIOLATIONS = """
document.addEventListener('securitypolicyviolation', (event) => {
  window.__reportCspViolation(
    `${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`
    + ` at ${event.sourceFile}:${event.lineNumber} on ${document.location.pathname}`
    + (event.sample ? ` (${event.sample})` : ''));
});
"""


POLICY_MESSAGES = ("Content Security Policy", "Refused to", "Permissions-Policy")


def watch_policies(context) -> list[str]:
    """Collect the CSP violations (events and console errors) of every page `context` opens."""
    violations: list[str] = []

    def report(text: str) -> None:
        violations.append(text)

    context.expose_function("__reportCspViolation", report)
    context.add_init_script(REPORT_VIOLATIONS)

    def console(message) -> None:
        if any(text in message.text for text in POLICY_MESSAGES):
            violations.append(f"console: {message.text}")

    context.on("page", lambda page: page.on("console", console))
    return violations


def new_context(browser, live_server: str, width: int = 1280, height: int = 800):
    """A browser context whose CSP violations are in `context.csp_violations`."""
    context = browser.new_context(base_url=live_server, viewport={"width": width, "height": height})
    context.csp_violations = watch_policies(context)
    return context


def close_context(context) -> None:
    """Close a context from `new_context`; fail if any page of it reported a CSP violation."""
    violations = list(context.csp_violations)
    context.close()
    assert not violations, "Content-Security-Policy violations:\n" + "\n".join(violations)


def wait_until(page, expression: str, timeout: float = 10.0) -> None:
    """Poll a JavaScript expression from here until it is truthy: Playwright's wait_for_function
    runs its predicate through eval() in the page, which the Content-Security-Policy refuses."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {expression}")
        page.wait_for_timeout(50)


def sign_in(page, username: str, password: str = "flowdesk-demo") -> None:
    """Sign in through the login page, with the keyboard where a person would use it."""
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
