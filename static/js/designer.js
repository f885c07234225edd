/* Flowdesk designer: the bpmn-js canvas island.
 *
 * The diagram lives in the browser until it is saved: Save (or autosave a few seconds after an
 * edit) posts the XML with the revision it was based on; the server answers with the problem list,
 * shown as a list and as markers. Selecting an element fetches its server-rendered properties
 * panel (htmx); a valid panel submit comes back as a `bpmn-apply` event applied here. The panel
 * applies as you type (the form's own debounced trigger); edits still unapplied are applied before
 * another element is shown, before a save, and a leave is refused while any remain.
 */
(function () {
  'use strict';

  const root = document.getElementById('designer');
  if (!root) return;
  if (typeof BpmnJS === 'undefined') {
    const status = document.getElementById('save-status');
    if (status) status.textContent = 'The diagram editor could not load: its front-end files are missing on the server.';
    return;
  }

  const AUTOSAVE_MS = Number(root.dataset.autosaveMs || 3000);
  const CONFIG = 'flowdesk:config';
  const NODE_BLOB = 'flowdesk:node';
  const DOCUMENT = 'flowdesk:document';
  const byId = (id) => document.getElementById(id);
  const readJSON = (id) => JSON.parse(byId(id).textContent);
  /* The server's kind table: each kind's bpmn-js type, fixed event definition, marks and config
   * keys, its palette entries and replace-menu targets. */
  const KIND_TABLE = readJSON('flowdesk-kinds');
  const KINDS = KIND_TABLE.kinds;
  const DEFINITIONS = KIND_TABLE.definitions;
  const kindsWhere = (test) => Object.keys(KINDS).filter((kind) => test(KINDS[kind]));
  const SEVERITY_RANK = { info: 0, warning: 1, error: 2 };
  const SEVERITY_LABEL = { error: 'Error', warning: 'Warning', info: 'Note' };

  /* --- what the palette, context pad and replace menu offer: only the kinds Flowdesk runs --- */

  /* The palette draws each kind from its table entries, in their order; bpmn-js's own tools
   * stay first. */
  const PALETTE_TOOLS = new Set(['hand-tool', 'lasso-tool', 'space-tool', 'global-connect-tool',
    'tool-separator']);
  const PALETTE = Object.keys(KINDS)
    .flatMap((kind) => KINDS[kind].palette.map((entry) => Object.assign({ kind: kind }, entry)))
    .sort((a, b) => a.order - b.order);
  const PALETTE_ENTRY = Object.fromEntries(PALETTE.map((entry) => [`create.${entry.action}`, entry]));
  const APPEND = {
    'append.user-task': ['bpmn:UserTask', 'bpmn-icon-user-task', 'Append user task'],
    'append.service-task': ['bpmn:ServiceTask', 'bpmn-icon-service-task', 'Append service task'],
    'append.call-activity': ['bpmn:CallActivity', 'bpmn-icon-call-activity', 'Append call activity'],
    'append.parallel-gateway': ['bpmn:ParallelGateway', 'bpmn-icon-gateway-parallel', 'Append parallel gateway'],
    'append.timer-catch': ['bpmn:IntermediateCatchEvent', 'bpmn-icon-intermediate-event-catch-timer', 'Append timer', 'bpmn:TimerEventDefinition'],
    'append.message-catch': ['bpmn:IntermediateCatchEvent', 'bpmn-icon-intermediate-event-catch-message', 'Append message catch', 'bpmn:MessageEventDefinition'],
    'append.escalation-throw': ['bpmn:IntermediateThrowEvent', 'bpmn-icon-intermediate-event-throw-escalation', 'Append escalation (throw)', 'bpmn:EscalationEventDefinition'],
    'append.inclusive-gateway': ['bpmn:InclusiveGateway', 'bpmn-icon-gateway-or', 'Append inclusive gateway'],
    'append.event-based-gateway': ['bpmn:EventBasedGateway', 'bpmn-icon-gateway-eventbased', 'Append event-based gateway'],
    'append.signal-catch': ['bpmn:IntermediateCatchEvent', 'bpmn-icon-intermediate-event-catch-signal', 'Append signal catch', 'bpmn:SignalEventDefinition'],
    'append.conditional-catch': ['bpmn:IntermediateCatchEvent', 'bpmn-icon-intermediate-event-catch-condition', 'Append conditional catch', 'bpmn:ConditionalEventDefinition'],
    'append.signal-throw': ['bpmn:IntermediateThrowEvent', 'bpmn-icon-intermediate-event-throw-signal', 'Append signal throw', 'bpmn:SignalEventDefinition'],
    'append.message-throw': ['bpmn:IntermediateThrowEvent', 'bpmn-icon-intermediate-event-throw-message', 'Append message throw', 'bpmn:MessageEventDefinition'],
    'append.link-throw': ['bpmn:IntermediateThrowEvent', 'bpmn-icon-intermediate-event-throw-link', 'Append link throw', 'bpmn:LinkEventDefinition'],
    'append.milestone': ['bpmn:IntermediateThrowEvent', 'bpmn-icon-intermediate-event-none', 'Append milestone'],
    'append.send-task': ['bpmn:SendTask', 'bpmn-icon-send-task', 'Append send task'],
    'append.receive-task': ['bpmn:ReceiveTask', 'bpmn-icon-receive-task', 'Append receive task'],
    'append.script-task': ['bpmn:ScriptTask', 'bpmn-icon-script-task', 'Append script task'],
    'append.manual-task': ['bpmn:ManualTask', 'bpmn-icon-manual-task', 'Append manual task'],
  };
  /* What may follow an event-based gateway (kinds.EVENT_GATEWAY_TARGETS). */
  const EVENT_GATEWAY_APPEND = ['append.message-catch', 'append.timer-catch', 'append.signal-catch', 'append.conditional-catch', 'append.receive-task'];
  const PAD_KEEP = new Set(['delete', 'connect', 'replace', 'append.end-event', 'append.gateway']);
  /* The replace menu offers the kinds Flowdesk runs (and the flows); error and escalation
   * starts, and non-interrupting starts, only inside event sub-processes. */
  const replaceIds = (key) => Object.values(KINDS).flatMap((spec) => spec[key].map((name) => `replace-with-${name}`));
  const REPLACE_KEEP = new Set([...replaceIds('replace'), 'replace-with-default-flow', 'replace-with-sequence-flow']);
  const EVENT_START_REPLACE = new Set(replaceIds('scopedReplace'));
  /* The elements of the kinds boundary events may attach to. */
  const ACTIVITY_HOSTS = new Set(KIND_TABLE.boundaryHosts.map((kind) => KINDS[kind].type));
  const isHost = (bo) => !!bo && ACTIVITY_HOSTS.has(bo.$type) && !bo.triggeredByEvent;
  /* The elements of the kinds that may run as multi-instance (the replace menu's MI toggles). */
  const MULTI_TYPES = new Set(KIND_TABLE.multiInstance.map((kind) => KINDS[kind].type));
  const inEventSubProcess = (bo) => !!bo && !!bo.$parent && bo.$parent.$type === 'bpmn:SubProcess' && !!bo.$parent.triggeredByEvent;

  /* bpmn-js attributes of a kind's marks (`triggeredByEvent="true"` is `true`). */
  const markAttrs = (marks) => Object.fromEntries(Object.entries(marks)
    .map(([name, value]) => [name, value === 'true' ? true : value === 'false' ? false : value]));

  /* The shapes a palette entry draws, the first being the one placed and selected: a sub-process
   * comes expanded with its start event inside. */
  function entryShapes(factory, entry) {
    const spec = KINDS[entry.kind];
    const attrs = Object.assign({ type: spec.type }, markAttrs(spec.marks));
    const definition = entry.event || spec.event;
    if (definition) attrs.eventDefinitionType = DEFINITIONS[definition];
    if (entry.startInside === null && !SCOPES.includes(entry.kind)) return [factory.createShape(attrs)];
    if (entry.startInside === null) return [factory.createShape(Object.assign(attrs, { isExpanded: true }))];
    const scope = factory.createShape(Object.assign(attrs, { isExpanded: true, x: 0, y: 0 }));
    const start = { type: 'bpmn:StartEvent', x: 40, y: 82, parent: scope };
    if (entry.startInside) start.eventDefinitionType = DEFINITIONS[entry.startInside];
    return [scope, factory.createShape(start)];
  }

  function FlowdeskPalette(palette, create, elementFactory) {
    this.getPaletteEntries = function () {
      return function (entries) {
        const kept = {};
        Object.keys(entries).forEach((id) => { if (PALETTE_TOOLS.has(id)) kept[id] = entries[id]; });
        PALETTE.forEach((entry) => {
          /* A single shape is selected as created (an intermediate event dropped on a border
           * becomes a boundary event); of a scope with its start, the scope. */
          const start = (event) => {
            const shapes = entryShapes(elementFactory, entry);
            if (shapes.length === 1) create.start(event, shapes[0]);
            else create.start(event, shapes, { hints: { autoSelect: [shapes[0]] } });
          };
          kept[`create.${entry.action}`] = {
            group: entry.group, className: entry.icon, title: entry.title,
            action: { dragstart: start, click: start },
          };
        });
        return kept;
      };
    };
    palette.registerProvider(500, this);
  }
  FlowdeskPalette.$inject = ['palette', 'create', 'elementFactory'];

  function FlowdeskContextPad(contextPad, create, elementFactory, autoPlace) {
    this.getContextPadEntries = function (element) {
      return function (entries) {
        const kept = {};
        Object.keys(entries).forEach((id) => { if (PAD_KEEP.has(id)) kept[id] = entries[id]; });
        const bo = element.businessObject;
        const eventGateway = !!bo && bo.$type === 'bpmn:EventBasedGateway';
        if (!eventGateway && !entries['append.end-event']) return kept;
        (eventGateway ? EVENT_GATEWAY_APPEND : Object.keys(APPEND)).forEach((id) => {
          const spec = APPEND[id];
          const make = () => elementFactory.createShape(spec[3] ? { type: spec[0], eventDefinitionType: spec[3] } : { type: spec[0] });
          kept[id] = {
            group: 'model', className: spec[1], title: spec[2],
            action: {
              dragstart: (event) => create.start(event, make(), { source: element }),
              click: () => autoPlace.append(element, make()),
            },
          };
        });
        return kept;
      };
    };
    contextPad.registerProvider(500, this);
  }
  FlowdeskContextPad.$inject = ['contextPad', 'create', 'elementFactory', 'autoPlace'];

  function FlowdeskReplaceMenu(popupMenu) {
    this.getPopupMenuEntries = function (element) {
      const eventStart = inEventSubProcess(element.businessObject);
      return function (entries) {
        const kept = {};
        Object.keys(entries).forEach((id) => {
          if (REPLACE_KEEP.has(id) || (eventStart && EVENT_START_REPLACE.has(id))) kept[id] = entries[id];
        });
        return kept;
      };
    };
    /* The multi-instance markers on the kinds that may repeat; interrupting or not on catches. */
    this.getPopupMenuHeaderEntries = function (element) {
      const bo = element.businessObject;
      return function (entries) {
        const kept = {};
        Object.keys(entries).forEach((id) => {
          if ((id === 'toggle-parallel-mi' || id === 'toggle-sequential-mi') && MULTI_TYPES.has(bo.$type) && !bo.triggeredByEvent) kept[id] = entries[id];
          if (id === 'toggle-non-interrupting') kept[id] = entries[id];
        });
        return kept;
      };
    };
    popupMenu.registerProvider('bpmn-replace', 500, this);
  }

  /* Boundary events attach (bpmn-js's drop on an activity's border) only to the activities
   * Flowdesk runs them on; the catch-all rules of bpmn-js decide everything else. */
  function FlowdeskRules(eventBus, bpmnRules) {
    const refuse = (shapes, target, position) => {
      if (!target || !target.businessObject || isHost(target.businessObject)) return undefined;
      return bpmnRules.canAttach(shapes, target, null, position) === 'attach' ? false : undefined;
    };
    eventBus.on('commandStack.shape.create.canExecute', 1500, (event) => refuse([event.context.shape], event.context.target, event.context.position));
    eventBus.on('commandStack.shape.attach.canExecute', 1500, (event) => refuse([event.context.shape], event.context.target, event.context.position));
    eventBus.on('commandStack.elements.move.canExecute', 1500, (event) => refuse(event.context.shapes, event.context.target, event.context.position));
  }
  FlowdeskRules.$inject = ['eventBus', 'bpmnRules'];
  FlowdeskReplaceMenu.$inject = ['popupMenu'];

  /* bpmn-js draws the align and distribute icons from markup with style="" attributes, which the
   * Content-Security-Policy refuses; the same values as SVG presentation attributes are allowed. */
  const presentational = (html) => html.replace(/\sstyle="([^"]*)"/g, (match, css) => css.split(';')
    .map((rule) => rule.split(':').map((part) => part.trim()))
    .filter(([name, value]) => name && value)
    .map(([name, value]) => ` ${name}="${value}"`)
    .join(''));

  function FlowdeskAlignIcons(contextPad, popupMenu) {
    const rewrite = (key) => () => (entries) => {
      Object.values(entries).forEach((entry) => {
        if (typeof entry[key] === 'string') entry[key] = presentational(entry[key]);
      });
      return entries;
    };
    this.getMultiElementContextPadEntries = rewrite('html');
    this.getPopupMenuEntries = rewrite('imageHtml');
    contextPad.registerProvider(500, this);
    popupMenu.registerProvider('align-elements', 500, this);
  }
  FlowdeskAlignIcons.$inject = ['contextPad', 'popupMenu'];

  /* One undoable step for a panel apply, however many properties it touches. */
  function ApplyHandler() {}
  ApplyHandler.prototype.preExecute = function (context) { context.run(); };
  ApplyHandler.prototype.execute = function () { return []; };
  ApplyHandler.prototype.revert = function () { return []; };

  /* --- where new shapes go: one rule for every append and keyboard create --- */

  /* A new shape never overlaps another shape of its scope, and the flow to it crosses none:
   * appended shapes go right of the source with room for its context pad (bpmn-js leaves about
   * 50 px, under the pad), moved down past anything in the way. Shapes outside the source's
   * sub-process do not block: the sub-process grows, and growing moves what is beside it. */
  const APPEND_GAP = 120;
  const APPEND_MARGIN = 30;
  const snap = (value) => Math.round(value / 10) * 10;
  const within = (container, element) => {
    for (let parent = element.parent; parent; parent = parent.parent) if (parent === container) return true;
    return false;
  };
  const apart = (a, b, margin) => a.x >= b.x + b.width + margin || b.x >= a.x + a.width + margin
    || a.y >= b.y + b.height + margin || b.y >= a.y + a.height + margin;
  const isContainer = (element) => !!element.businessObject
    && ['bpmn:SubProcess', 'bpmn:Participant'].includes(element.businessObject.$type);

  function Placement(elementRegistry, canvas, layouter, elementFactory) {
    let probeFlow = null;
    /* The shapes a new shape in `scope` must keep clear of, besides the ones listed in `skip`. */
    this.shapesIn = (scope, skip) => elementRegistry.filter((element) => !element.waypoints
      && element.type !== 'label' && element.width !== undefined && element.parent
      && within(scope, element) && !skip.some((other) => other === element || within(element, other)));
    this.free = (box, shapes, margin) => shapes.every((other) => apart(box, other, margin));
    /* The route bpmn-js would give a flow from `source` to a shape of `box` crosses no shape. */
    this.clearRoute = (source, shape, box, shapes) => {
      if (!probeFlow) probeFlow = elementFactory.createConnection({ type: 'bpmn:SequenceFlow' });
      const target = { id: shape.id, type: shape.type, businessObject: shape.businessObject, di: shape.di,
        x: box.x, y: box.y, width: box.width, height: box.height };
      const points = layouter.layoutConnection(probeFlow, { source: source, target: target }) || [];
      for (let i = 0; i + 1 < points.length; i += 1) {
        const a = points[i]; const b = points[i + 1];
        const segment = { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), width: Math.abs(a.x - b.x), height: Math.abs(a.y - b.y) };
        if (shapes.some((other) => other !== source.host && !apart(segment, other, 4))) return false;
      }
      return true;
    };
    /* The first free spot going down from `box` (centre point, snapped), or the start. */
    this.below = (box, fits) => {
      const step = box.height + APPEND_MARGIN;
      for (let tries = 0; tries < 30; tries += 1) {
        const candidate = Object.assign({}, box, { y: box.y + tries * step });
        if (fits(candidate)) return candidate;
      }
      return box;
    };
    this.centre = (box) => ({ x: snap(box.x + box.width / 2), y: snap(box.y + box.height / 2) });
    /* A free spot for `shape` in the part of the current plane in view, left to right, top down. */
    this.inView = (shape, palette) => {
      const root = canvas.getRootElement();
      const view = canvas.viewbox();
      const shapes = this.shapesIn(root, []);
      const left = view.x + (palette || 0) / view.scale + APPEND_MARGIN;
      const across = shape.width + APPEND_MARGIN * 2;
      const down = shape.height + APPEND_MARGIN * 2;
      const columns = Math.max(1, Math.floor((view.x + view.width - left) / across));
      for (let row = 0; row < 40; row += 1) {
        for (let column = 0; column < columns; column += 1) {
          const box = { x: left + column * across, y: view.y + APPEND_MARGIN + row * down, width: shape.width, height: shape.height };
          if (this.free(box, shapes, APPEND_MARGIN)) return this.centre(box);
        }
      }
      return this.centre({ x: left, y: view.y + view.height + APPEND_MARGIN, width: shape.width, height: shape.height });
    };
  }
  Placement.$inject = ['elementRegistry', 'canvas', 'layouter', 'elementFactory'];

  function FlowdeskAutoPlace(eventBus, placement) {
    /* Above bpmn-js's grid-snapping placement (2000), which would otherwise decide. */
    eventBus.on('autoPlace', 2500, (context) => {
      const { source, shape } = context;
      if (!source || source.waypoints || !shape) return undefined;
      const scope = source.host ? source.host.parent : source.parent;
      const shapes = placement.shapesIn(scope, [source]);
      const start = {
        x: source.x + source.width + APPEND_GAP,
        y: source.y + source.height / 2 - shape.height / 2,
        width: shape.width,
        height: shape.height,
      };
      const box = placement.below(start, (candidate) => placement.free(candidate, shapes, APPEND_MARGIN)
        && placement.clearRoute(source, shape, candidate, shapes));
      return placement.centre(box);
    });
  }
  FlowdeskAutoPlace.$inject = ['eventBus', 'placement'];

  /* A sub-process (or pool) that grows, as it does when a shape is added at its edge, pushes
   * what lies beyond the edge it grew at by as much, when it would otherwise come too close:
   * everything on that side moves together, so flows between those shapes keep their shape. */
  function GrowthMakesRoom(eventBus, modeling) {
    eventBus.on('commandStack.shape.resize.postExecute', (event) => {
      const { shape, oldBounds } = event.context;
      if (!oldBounds || !isContainer(shape) || !shape.parent) return;
      const grown = {
        right: shape.x + shape.width - (oldBounds.x + oldBounds.width),
        down: shape.y + shape.height - (oldBounds.y + oldBounds.height),
        left: oldBounds.x - shape.x,
        up: oldBounds.y - shape.y,
      };
      const siblings = () => shape.parent.children.filter((other) => other !== shape && !other.waypoints
        && other.type !== 'label' && !other.host && other.width !== undefined);
      const sides = {
        right: [(o) => o.x >= oldBounds.x + oldBounds.width, { x: 1, y: 0 }],
        down: [(o) => o.y >= oldBounds.y + oldBounds.height, { x: 0, y: 1 }],
        left: [(o) => o.x + o.width <= oldBounds.x, { x: -1, y: 0 }],
        up: [(o) => o.y + o.height <= oldBounds.y, { x: 0, y: -1 }],
      };
      Object.keys(sides).forEach((side) => {
        const amount = grown[side];
        if (amount <= 0) return;
        const [beyond, direction] = sides[side];
        const moving = siblings().filter(beyond);
        if (!moving.some((other) => !apart(shape, other, APPEND_MARGIN))) return;
        modeling.moveElements(moving, { x: direction.x * amount, y: direction.y * amount }, shape.parent);
      });
    });
  }
  GrowthMakesRoom.$inject = ['eventBus', 'modeling'];

  const FlowdeskModule = {
    __init__: ['flowdeskPalette', 'flowdeskContextPad', 'flowdeskReplaceMenu', 'flowdeskAlignIcons',
      'flowdeskAutoPlace', 'flowdeskRules', 'growthMakesRoom'],
    placement: ['type', Placement],
    growthMakesRoom: ['type', GrowthMakesRoom],
    flowdeskRules: ['type', FlowdeskRules],
    flowdeskAutoPlace: ['type', FlowdeskAutoPlace],
    flowdeskPalette: ['type', FlowdeskPalette],
    flowdeskContextPad: ['type', FlowdeskContextPad],
    flowdeskReplaceMenu: ['type', FlowdeskReplaceMenu],
    flowdeskAlignIcons: ['type', FlowdeskAlignIcons],
  };

  const modeler = new BpmnJS({
    container: byId('canvas'),
    moddleExtensions: { flowdesk: readJSON('flowdesk-moddle') },
    additionalModules: [FlowdeskModule],
  });
  window.modeler = modeler;
  const get = (name) => modeler.get(name);
  get('commandStack').registerHandler('flowdesk.apply', ApplyHandler);

  /* --- reading an element the way the server's BPMN reader will --- */

  const CATCHES = KIND_TABLE.events.boundary;
  const EVENT_STARTS = KIND_TABLE.events.eventStart;
  const PROCESS_STARTS = ['', ...KIND_TABLE.events.processStart];
  const ENDS = KIND_TABLE.events.end;
  /* Events whose `event` config says their definition (start, end and boundary events), and
   * which of those it may be. */
  const CONFIG_EVENT = kindsWhere((spec) => spec.role === 'event' && spec.event === null);
  const ALLOWED_EVENTS = {
    startEvent: (bo) => (inEventSubProcess(bo) ? EVENT_STARTS : PROCESS_STARTS).includes(eventOf(bo)) || eventOf(bo) === '',
    endEvent: (bo) => ENDS.includes(eventOf(bo)),
    boundaryEvent: (bo) => CATCHES.includes(eventOf(bo)),
  };
  /* Intermediate events whose kind fixes their one definition ('' for none). */
  const FIXED_EVENT = Object.fromEntries(kindsWhere((spec) => spec.event !== null)
    .map((kind) => [kind, KINDS[kind].event]));
  /* A timer's settings, as far as the kind takes them (a timer catch has no cycle). */
  const TIMER_KEYS = ['duration', 'date', 'cycle'];
  const timerKeys = (kind) => TIMER_KEYS.filter((key) => KINDS[kind].configKeys.includes(key));
  const TIMER_PROPS = { duration: 'timeDuration', date: 'timeDate', cycle: 'timeCycle' };
  const fixedEvent = (kind) => (KINDS[kind] ? KINDS[kind].event : null);
  const MESSAGE_REF = kindsWhere((spec) => spec.messageRef);
  const SCOPES = KIND_TABLE.scopes;
  const MULTI_KINDS = KIND_TABLE.multiInstance;
  /* The kinds of each bpmn-js type, those with marks (attributes that tell them apart) first. */
  const BY_TYPE = {};
  Object.keys(KINDS).forEach((kind) => { (BY_TYPE[KINDS[kind].type] = BY_TYPE[KINDS[kind].type] || []).push(kind); });
  Object.values(BY_TYPE).forEach((kinds) => kinds.sort((a, b) => Object.keys(KINDS[b].marks).length - Object.keys(KINDS[a].marks).length));

  /* What an event's one definition makes it: '' with none, null with several or another one. */
  function eventOf(bo) {
    const defs = bo.eventDefinitions || [];
    if (!defs.length) return '';
    if (defs.length > 1) return null;
    return Object.keys(DEFINITIONS).find((name) => DEFINITIONS[name] === defs[0].$type) || null;
  }

  function kindOf(bo) {
    const loop = bo.loopCharacteristics;
    const LOOPS = ['bpmn:MultiInstanceLoopCharacteristics', 'bpmn:StandardLoopCharacteristics'];
    if (loop && !LOOPS.includes(loop.$type)) return null;
    if (bo.$type === 'bpmn:SequenceFlow') return 'sequenceFlow';
    const event = eventOf(bo);
    const marked = (kind) => Object.entries(KINDS[kind].marks).every(([name, value]) => String(bo[name]) === value);
    const found = (BY_TYPE[bo.$type] || []).find((kind) => marked(kind)
      && (KINDS[kind].event === null || KINDS[kind].event === event));
    if (!found) return null;
    return !ALLOWED_EVENTS[found] || ALLOWED_EVENTS[found](bo) ? found : null;
  }

  function extensionValues(bo) {
    return (bo.extensionElements && bo.extensionElements.values) || [];
  }

  function blob(bo, type) {
    const holder = extensionValues(bo).find((v) => v.$type === type);
    if (!holder) return null;
    try {
      const value = JSON.parse(holder.body || '');
      return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
    } catch (e) {
      return null;
    }
  }

  function text(expression) {
    return expression && typeof expression.body === 'string' ? expression.body.trim() : '';
  }

  const isObject = (value) => !!value && typeof value === 'object' && !Array.isArray(value);

  function configOf(bo, kind, element) {
    const config = Object.assign({}, blob(bo, CONFIG) || {});
    const def = (bo.eventDefinitions || [])[0];
    const event = eventOf(bo);
    if (CONFIG_EVENT.includes(kind) && event) config.event = event;
    if ((config.event === 'timer' || fixedEvent(kind) === 'timer') && def) {
      const key = timerKeys(kind).find((name) => text(def[TIMER_PROPS[name]]));
      if (key) config[key] = text(def[TIMER_PROPS[key]]);
    }
    if ((config.event === 'message' || fixedEvent(kind) === 'message') && def && def.messageRef && def.messageRef.name) config.message = def.messageRef.name;
    if ((config.event === 'signal' || fixedEvent(kind) === 'signal') && def && def.signalRef && def.signalRef.name) config.signal = def.signalRef.name;
    if (fixedEvent(kind) === 'link' && def && def.name) config.link = def.name;
    if (MESSAGE_REF.includes(kind) && bo.messageRef && bo.messageRef.name) config.message = bo.messageRef.name;
    if (kind === 'scriptTask') {
      if (typeof bo.script === 'string' && bo.script) config.script = bo.script;
      if (bo.scriptFormat) config.language = bo.scriptFormat;
    }
    const thrown = def && (def.errorRef || def.escalationRef);
    const code = thrown && (thrown.errorCode || thrown.escalationCode);
    if ((['error', 'escalation'].includes(config.event) || fixedEvent(kind) === 'escalation') && code) config.code = code;
    if (kind === 'boundaryEvent') {
      if (bo.attachedToRef) config.attachedTo = bo.attachedToRef.id;
      config.interrupting = bo.cancelActivity !== false;
    }
    if (kind === 'startEvent' && config.event && inEventSubProcess(bo)) config.interrupting = bo.isInterrupting !== false;
    if (kind === 'callActivity' && bo.calledElement) config.process = bo.calledElement;
    if (kind === 'complexGateway' && text(bo.activationCondition)) config.activation = text(bo.activationCondition);
    if ((kind === 'receiveTask' || kind === 'eventBasedGateway') && bo.instantiate) config.instantiate = true;
    if (kind === 'eventBasedGateway' && bo.eventGatewayType === 'Parallel') config.gatewayType = 'parallel';
    if (kind === 'adHocSubProcess') {
      if (bo.ordering === 'Sequential') config.ordering = 'sequential';
      if (bo.cancelRemainingInstances === false) config.cancelRemaining = false;
      if (text(bo.completionCondition)) config.completion = text(bo.completionCondition);
    }
    if (SCOPES.includes(kind) && element && element.collapsed) config.collapsed = true;
    if (MULTI_KINDS.includes(kind)) {
      const loop = bo.loopCharacteristics;
      if (loop && loop.$type === 'bpmn:StandardLoopCharacteristics') {
        /* A standard loop: its settings live in flowdesk:config (export writes them as BPMN). */
        const standard = Object.assign({}, isObject(config.loop) ? config.loop : {});
        if (loop.testBefore !== undefined) standard.testBefore = !!loop.testBefore;
        if (text(loop.loopCondition)) standard.condition = text(loop.loopCondition);
        if (loop.loopMaximum) standard.maximum = Number(loop.loopMaximum);
        if (standard.testBefore === undefined) standard.testBefore = false;
        config.loop = standard;
        delete config.multiInstance;
      } else if (loop) {
        const multi = Object.assign({}, isObject(config.multiInstance) ? config.multiInstance : {});
        multi.sequential = !!loop.isSequential;
        if (text(loop.loopCardinality)) multi.cardinality = text(loop.loopCardinality);
        if (text(loop.completionCondition)) multi.completion = text(loop.completionCondition);
        config.multiInstance = multi;
      } else {
        delete config.multiInstance;
      }
    }
    return config;
  }

  /* The process an element belongs to runs in Flowdesk: it is the one Flowdesk wrote (with its
   * document extension), or the only one. Elements of the other pools are documentation. */
  function inOwnProcess(bo) {
    let process = bo;
    while (process && process.$type !== 'bpmn:Process') process = process.$parent;
    if (!process) return true;
    const processes = (modeler.getDefinitions().rootElements || [])
      .filter((e) => e.$type === 'bpmn:Process');
    return processes.length < 2 || extensionValues(process).some((v) => v.$type === DOCUMENT);
  }

  function panelValues(element) {
    const bo = element.businessObject;
    const own = inOwnProcess(bo);
    const kind = own ? kindOf(bo) : null;
    const type = own ? bo.$type.replace('bpmn:', '') : 'OtherPool';
    const values = { id: bo.id, kind: kind || '', type: type, name: bo.name || '' };
    if (kind === 'sequenceFlow') {
      values.condition = bo.conditionExpression ? bo.conditionExpression.body || '' : '';
      values.default = bo.sourceRef && bo.sourceRef.default === bo ? '1' : '0';
      values.source_kind = bo.sourceRef ? kindOf(bo.sourceRef) || '' : '';
    } else if (kind) {
      values.config = JSON.stringify(configOf(bo, kind, element));
      if (kind === 'startEvent' && inEventSubProcess(bo)) values.scope = 'event';
      if (kind === 'boundaryEvent' && bo.attachedToRef) values.host_name = bo.attachedToRef.name || '';
      Object.assign(values, usedNames());
    }
    return values;
  }

  /* --- applying a panel submit (the server validated it) --- */

  const plain = (value) => typeof value === 'string' && value !== '' && value === value.trim();

  function sorted(value) {
    if (Array.isArray(value)) return value.map(sorted);
    if (value && typeof value === 'object') {
      const out = {};
      Object.keys(value).sort().forEach((k) => { out[k] = sorted(value[k]); });
      return out;
    }
    return value;
  }

  function messageNamed(name) {
    const definitions = modeler.getDefinitions();
    const found = (definitions.rootElements || []).find((e) => e.$type === 'bpmn:Message' && e.name === name);
    if (found) return found;
    const message = get('bpmnFactory').create('bpmn:Message', { name: name });
    message.$parent = definitions;
    definitions.get('rootElements').push(message);
    return message;
  }

  function applyNode(element, detail) {
    const bo = element.businessObject;
    const moddle = get('moddle');
    const modeling = get('modeling');
    const config = Object.assign({}, detail.config || {});
    applyStructure(element, detail.kind, config);
    const values = [];
    extensionValues(bo).forEach((value) => {
      if (value.$type === CONFIG) return;
      if (value.$type === NODE_BLOB) {
        const extra = blob(bo, NODE_BLOB) || {};
        delete extra.title;
        if (Object.keys(extra).length) values.push(moddle.create(NODE_BLOB, { body: JSON.stringify(sorted(extra)) }));
        return;
      }
      values.push(value);
    });
    if (Object.keys(config).length) values.push(moddle.create(CONFIG, { body: JSON.stringify(sorted(config)) }));
    modeling.updateProperties(element, {
      name: detail.title || undefined,
      extensionElements: values.length ? moddle.create('bpmn:ExtensionElements', { values: values }) : undefined,
    });
  }

  function signalNamed(name) {
    const definitions = modeler.getDefinitions();
    const found = (definitions.rootElements || []).find((e) => e.$type === 'bpmn:Signal' && e.name === name);
    if (found) return found;
    const signal = get('bpmnFactory').create('bpmn:Signal', { name: name });
    signal.$parent = definitions;
    definitions.get('rootElements').push(signal);
    return signal;
  }

  /* The signal and message names the diagram's elements use, for the panel's suggestions. */
  function usedNames() {
    const names = { signals: new Set(), messages: new Set() };
    get('elementRegistry').forEach((element) => {
      const bo = element.businessObject;
      if (!bo || element.type === 'label') return;
      const refs = [bo.messageRef, ...(bo.eventDefinitions || []).map((d) => d.signalRef || d.messageRef)];
      refs.forEach((ref) => {
        if (!ref || !plain(ref.name)) return;
        (ref.$type === 'bpmn:Signal' ? names.signals : names.messages).add(ref.name);
      });
    });
    return { signals: [...names.signals].sort().join('\n'), messages: [...names.messages].sort().join('\n') };
  }

  /* An error or escalation root element with this code, made when the diagram has none yet. */
  function codeNamed(type, code) {
    const attr = type === 'bpmn:Error' ? 'errorCode' : 'escalationCode';
    const definitions = modeler.getDefinitions();
    const found = (definitions.rootElements || []).find((e) => e.$type === type && e[attr] === code);
    if (found) return found;
    const made = get('bpmnFactory').create(type, { name: code, [attr]: code });
    made.$parent = definitions;
    definitions.get('rootElements').push(made);
    return made;
  }

  const expression = (body, language) => (plain(body)
    ? get('moddle').create('bpmn:FormalExpression', language ? { body: body, language: language } : { body: body })
    : undefined);

  /* The standard BPMN the reader takes these settings from: event definitions (timers, messages,
   * error and escalation codes), interrupting, the called process and the multi-instance loop.
   * What standard BPMN says is removed from `config`; the rest stays in flowdesk:config. */
  function applyStructure(element, kind, config) {
    const bo = element.businessObject;
    const modeling = get('modeling');
    delete config.collapsed;
    if (CONFIG_EVENT.includes(kind) || kind in FIXED_EVENT) {
      const wanted = kind in FIXED_EVENT ? FIXED_EVENT[kind] : (config.event || '');
      delete config.event;
      let def = (bo.eventDefinitions || [])[0];
      if (!wanted) {
        if ((bo.eventDefinitions || []).length) modeling.updateProperties(element, { eventDefinitions: [] });
        def = null;
      } else if (!def || def.$type !== DEFINITIONS[wanted] || bo.eventDefinitions.length !== 1) {
        def = get('bpmnFactory').create(DEFINITIONS[wanted]);
        def.$parent = bo;
        modeling.updateProperties(element, { eventDefinitions: [def] });
      }
      if (wanted === 'timer') {
        const props = { timeDuration: undefined, timeDate: undefined, timeCycle: undefined };
        const keys = timerKeys(kind);
        const key = keys.find((name) => plain(config[name]));
        if (key) props[TIMER_PROPS[key]] = expression(config[key], key === 'date' ? 'flowdesk' : undefined);
        keys.forEach((name) => { if (plain(config[name])) delete config[name]; });
        modeling.updateModdleProperties(element, def, props);
      } else if (wanted === 'message') {
        let message;
        if (plain(config.message)) { message = messageNamed(config.message); delete config.message; }
        modeling.updateModdleProperties(element, def, { messageRef: message });
      } else if (wanted === 'signal') {
        let signal;
        if (plain(config.signal)) { signal = signalNamed(config.signal); delete config.signal; }
        modeling.updateModdleProperties(element, def, { signalRef: signal });
      } else if (wanted === 'link') {
        const name = plain(config.link) ? config.link : undefined;
        if (name) delete config.link;
        modeling.updateModdleProperties(element, def, { name: name });
      } else if (wanted === 'error' || wanted === 'escalation') {
        const type = wanted === 'error' ? 'bpmn:Error' : 'bpmn:Escalation';
        let ref;
        if (plain(config.code)) { ref = codeNamed(type, config.code); delete config.code; }
        modeling.updateModdleProperties(element, def, { [`${wanted}Ref`]: ref });
      }
    }
    if (kind === 'boundaryEvent') {
      delete config.attachedTo;
      const interrupting = config.interrupting !== false;
      delete config.interrupting;
      if ((bo.cancelActivity !== false) !== interrupting) modeling.updateProperties(element, { cancelActivity: interrupting });
    }
    if (kind === 'startEvent' && inEventSubProcess(bo)) {
      const interrupting = config.interrupting !== false;
      delete config.interrupting;
      if ((bo.isInterrupting !== false) !== interrupting) modeling.updateProperties(element, { isInterrupting: interrupting });
    }
    if (MESSAGE_REF.includes(kind)) {
      let message;
      if (plain(config.message)) { message = messageNamed(config.message); delete config.message; }
      if (bo.messageRef !== message) modeling.updateProperties(element, { messageRef: message });
    }
    if (kind === 'scriptTask') {
      const script = typeof config.script === 'string' && config.script ? config.script : undefined;
      const language = plain(config.language) ? config.language : 'flowdesk';
      delete config.script;
      delete config.language;
      if (bo.script !== script || bo.scriptFormat !== language) modeling.updateProperties(element, { script: script, scriptFormat: language });
    }
    if (kind === 'receiveTask' || kind === 'eventBasedGateway') {
      const instantiate = config.instantiate === true;
      delete config.instantiate;
      const props = {};
      if (!!bo.instantiate !== instantiate) props.instantiate = instantiate;
      if (kind === 'eventBasedGateway') {
        const type = config.gatewayType === 'parallel' ? 'Parallel' : 'Exclusive';
        delete config.gatewayType;
        if ((bo.eventGatewayType || 'Exclusive') !== type) props.eventGatewayType = type;
      }
      if (Object.keys(props).length) modeling.updateProperties(element, props);
    }
    if (kind === 'adHocSubProcess') {
      const ordering = config.ordering === 'sequential' ? 'Sequential' : 'Parallel';
      const cancel = config.cancelRemaining !== false;
      const completion = plain(config.completion) ? config.completion : undefined;
      delete config.ordering;
      delete config.cancelRemaining;
      if (completion) delete config.completion;
      const props = {};
      if ((bo.ordering || 'Parallel') !== ordering) props.ordering = ordering;
      if ((bo.cancelRemainingInstances !== false) !== cancel) props.cancelRemainingInstances = cancel;
      if (text(bo.completionCondition) !== (completion || '')) props.completionCondition = expression(completion, 'flowdesk');
      if (Object.keys(props).length) modeling.updateProperties(element, props);
    }
    if (kind === 'complexGateway') {
      const activation = plain(config.activation) ? config.activation : undefined;
      if (activation) delete config.activation;
      if (text(bo.activationCondition) !== (activation || '')) modeling.updateProperties(element, { activationCondition: expression(activation, 'flowdesk') });
    }
    if (kind === 'callActivity') {
      const called = plain(config.process) ? config.process : undefined;
      if (called) delete config.process;
      if (bo.calledElement !== called) modeling.updateProperties(element, { calledElement: called });
    }
    if (MULTI_KINDS.includes(kind)) {
      const multi = isObject(config.multiInstance) ? Object.assign({}, config.multiInstance) : null;
      delete config.multiInstance;
      let loop;
      if (!multi && isObject(config.loop)) {
        /* The marker only; the loop's settings stay in flowdesk:config. */
        loop = get('bpmnFactory').create('bpmn:StandardLoopCharacteristics');
        loop.$parent = bo;
      } else if (multi) {
        /* `sequential` stays in flowdesk:config too: bpmn-js does not write isSequential="false". */
        multi.sequential = multi.sequential === true;
        loop = get('bpmnFactory').create('bpmn:MultiInstanceLoopCharacteristics', { isSequential: multi.sequential });
        [['cardinality', 'loopCardinality'], ['completion', 'completionCondition']].forEach(([key, prop]) => {
          if (!plain(multi[key])) return;
          loop[prop] = expression(multi[key], 'flowdesk');
          loop[prop].$parent = loop;
          delete multi[key];
        });
        loop.$parent = bo;
        config.multiInstance = multi;
      }
      modeling.updateProperties(element, { loopCharacteristics: loop });
    }
  }

  function applyFlow(element, detail) {
    const moddle = get('moddle');
    const modeling = get('modeling');
    const bo = element.businessObject;
    const condition = detail.condition
      ? moddle.create('bpmn:FormalExpression', { body: detail.condition, language: 'flowdesk' })
      : undefined;
    modeling.updateProperties(element, { name: detail.title || undefined, conditionExpression: condition });
    const source = element.source;
    const isDefault = source.businessObject.default === bo;
    if (detail.default && !isDefault) modeling.updateProperties(source, { default: bo });
    if (!detail.default && isDefault) modeling.updateProperties(source, { default: undefined });
  }

  /* Whether an apply would change nothing (a blur after a debounced apply): no empty undo step. */
  function unchanged(element, detail) {
    const bo = element.businessObject;
    if ((bo.name || '') !== (detail.title || '')) return false;
    if (detail.kind === 'sequenceFlow') {
      const condition = bo.conditionExpression ? bo.conditionExpression.body || '' : '';
      const isDefault = !!element.source && element.source.businessObject.default === bo;
      return condition === (detail.condition || '') && isDefault === !!detail.default;
    }
    return JSON.stringify(sorted(configOf(bo, detail.kind, element))) === JSON.stringify(sorted(detail.config || {}));
  }

  /* A command ends direct editing on the canvas (a label typed after a panel edit), so an apply
   * that arrives meanwhile waits until that editing is done. */
  function applyWhenNotEditing(detail) {
    if (get('directEditing').isActive()) {
      setTimeout(() => applyWhenNotEditing(detail), 100);
      return;
    }
    applyDetail(detail);
  }

  byId('canvas').addEventListener('bpmn-apply', (event) => applyWhenNotEditing(event.detail || {}));

  function applyDetail(detail) {
    const element = get('elementRegistry').get(detail.id);
    if (!element || unchanged(element, detail)) return;
    get('commandStack').execute('flowdesk.apply', {
      run: () => (detail.kind === 'sequenceFlow' ? applyFlow(element, detail) : applyNode(element, detail)),
    });
    state.panelKey = JSON.stringify(panelValues(element));
  }

  /* --- state, saving, conflicts --- */

  const state = {
    revision: Number(root.dataset.revision),
    edits: 0,
    savedEdits: 0,
    saving: null,
    conflict: false,
    timer: null,
    panelKey: JSON.stringify({ count: '0' }),
    marked: [],
    covered: [],
    summary: '',
  };
  const dirty = () => state.edits !== state.savedEdits;

  function setStatus(message, tone) {
    if (tone === 'ok' && panelPending()) {
      message += panel.invalid
        ? ' · a value in the properties panel is not valid and was not applied'
        : ' · the properties panel has changes not applied yet';
      tone = panel.invalid ? 'error' : 'dirty';
    }
    const status = byId('save-status');
    status.textContent = message;
    status.dataset.tone = tone || '';
  }

  function csrfHeaders(extra) {
    return Object.assign({ 'X-CSRFToken': root.dataset.csrf, 'X-Draft-Revision': String(state.revision), Accept: 'application/json' }, extra || {});
  }

  async function save() {
    if (state.conflict) return false;
    if (state.saving) {
      await state.saving;
      return dirty() ? save() : !state.conflict;
    }
    clearTimeout(state.timer);
    state.saving = flushPanel().then(doSave);
    try {
      return await state.saving;
    } finally {
      state.saving = null;
    }
  }

  async function doSave() {
    const edits = state.edits;
    setStatus('Saving…', 'busy');
    let response; let body = {};
    try {
      const { xml } = await modeler.saveXML({ format: true });
      response = await fetch(root.dataset.saveUrl, {
        method: 'POST', credentials: 'same-origin', body: xml,
        headers: csrfHeaders({ 'Content-Type': 'application/xml' }),
      });
      body = await response.json().catch(() => ({}));
    } catch (error) {
      setStatus('Not saved: the server could not be reached. Your edits are still here; try Save again.', 'error');
      return false;
    }
    if (response.ok) {
      state.revision = body.revision;
      root.dataset.revision = String(body.revision);
      state.savedEdits = edits;
      showProblems(body.problems || []);
      staleCoverage();
      setStatus(dirty() ? 'Unsaved changes' : `Saved · revision ${body.revision} · ${state.summary}`, dirty() ? 'dirty' : 'ok');
      if (dirty()) schedule();
      return true;
    }
    if (response.status === 409) {
      showConflict(body.message || 'Someone else saved this draft.');
      return false;
    }
    const where = body.line ? ` (line ${body.line})` : '';
    setStatus(`Not saved: ${body.message || response.statusText}${where}`, 'error');
    if (body.unsupported && body.unsupported.length) {
      showProblems(body.unsupported.map((u) => ({
        severity: 'error', element_id: u.id, code: 'import.unsupported',
        message: `${u.type} '${u.id}' is not supported by Flowdesk${u.detail ? ': ' + u.detail : ''}; delete or replace it.`,
      })));
    }
    return false;
  }

  function schedule() {
    clearTimeout(state.timer);
    if (!state.conflict) state.timer = setTimeout(save, AUTOSAVE_MS);
  }

  function showConflict(message) {
    state.conflict = true;
    clearTimeout(state.timer);
    byId('conflict-message').textContent = message;
    byId('conflict').hidden = false;
    setStatus('Not saved: the draft changed elsewhere', 'error');
  }

  byId('conflict-reload').addEventListener('click', () => {
    state.savedEdits = state.edits;
    window.location.reload();
  });
  byId('conflict-download').addEventListener('click', async () => {
    const { xml } = await modeler.saveXML({ format: true });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([xml], { type: 'application/xml' }));
    link.download = `${root.dataset.key}-my-version.bpmn`;
    link.click();
    URL.revokeObjectURL(link.href);
  });

  byId('save-button').addEventListener('click', () => save());

  byId('layout-button').addEventListener('click', async () => {
    if (dirty() && !(await save())) return;
    if (state.conflict) return;
    setStatus('Laying out…', 'busy');
    const form = new FormData();
    form.append('revision', String(state.revision));
    const response = await fetch(root.dataset.layoutUrl, { method: 'POST', credentials: 'same-origin', headers: csrfHeaders(), body: form });
    const body = await response.json().catch(() => ({}));
    if (response.status === 409) return showConflict(body.message);
    if (!response.ok) return setStatus(`Not laid out: ${body.message || response.statusText}`, 'error');
    state.revision = body.revision;
    root.dataset.revision = String(body.revision);
    await modeler.importXML(body.xml);
    fit();
    state.edits = state.savedEdits = 0;
    showProblems(body.problems || []);
    setStatus(`Laid out and saved · revision ${body.revision} · ${state.summary}`, 'ok');
  });

  const publishLink = byId('publish-link');
  if (publishLink) {
    publishLink.addEventListener('click', async (event) => {
      if (!dirty() && !state.saving) return;
      event.preventDefault();
      if (await save()) window.location.href = publishLink.href;
    });
  }

  window.addEventListener('beforeunload', (event) => {
    if (dirty() || state.saving || panelPending()) {
      event.preventDefault();
      event.returnValue = '';
    }
  });

  /* --- coverage: what the scenarios walked, kept by the server with the draft --- */

  function showCoverage(coverage) {
    if (!coverage) return;
    const registry = get('elementRegistry');
    const canvas = get('canvas');
    [...coverage.nodes, ...coverage.flows].forEach((id) => {
      if (!registry.get(id)) return;
      canvas.addMarker(id, 'covered');
      state.covered.push(id);
    });
  }

  /* A saved edit changes the draft: the coverage was of the one before. */
  function staleCoverage() {
    const legend = byId('coverage-legend');
    if (!state.covered.length || !legend) return;
    const registry = get('elementRegistry');
    state.covered.forEach((id) => { if (registry.get(id)) get('canvas').removeMarker(id, 'covered'); });
    state.covered = [];
    byId('coverage-share').textContent = 'The draft changed: run the scenarios to see coverage.';
    legend.hidden = true;
  }

  /* --- problems: a list and markers on the diagram --- */

  function clearMarkers() {
    const canvas = get('canvas');
    const registry = get('elementRegistry');
    /* An element deleted since it was marked has no marker left to remove (and bpmn-js throws). */
    state.marked.forEach(([id, cls]) => { if (registry.get(id)) canvas.removeMarker(id, cls); });
    state.marked = [];
    get('overlays').remove({ type: 'problem' });
  }

  /* Select an element, opening the drill-down plane of the collapsed sub-process it is in. */
  function select(id) {
    const element = get('elementRegistry').get(id);
    if (!element) return;
    const canvas = get('canvas');
    const root = canvas.findRoot(element);
    if (root && root !== canvas.getRootElement()) canvas.setRootElement(root);
    canvas.scrollToElement(element);
    get('selection').select(element);
  }

  /* The collapsed sub-process shapes that hold `element` on a drill-down plane, innermost first. */
  function collapsedHosts(element) {
    const registry = get('elementRegistry');
    const hosts = [];
    let root = get('canvas').findRoot(element);
    while (root && root.businessObject && registry.get(root.businessObject.id) && hosts.length < 50) {
      const host = registry.get(root.businessObject.id);
      if (host === root || hosts.includes(host)) break;
      hosts.push(host);
      root = get('canvas').findRoot(host);
    }
    return hosts;
  }

  function showProblems(problems) {
    clearMarkers();
    const registry = get('elementRegistry');
    const canvas = get('canvas');
    const worst = {};
    const note = (id, severity, message) => {
      const seen = worst[id];
      if (!seen) worst[id] = { severity: severity, messages: [] };
      else if (SEVERITY_RANK[severity] > SEVERITY_RANK[seen.severity]) seen.severity = severity;
      worst[id].messages.push(message);
    };
    problems.forEach((p) => {
      const element = p.element_id && registry.get(p.element_id);
      if (!element) return;
      note(p.element_id, p.severity, p.message);
      /* A problem on a drill-down plane also marks the collapsed sub-process that holds it. */
      collapsedHosts(element).forEach((host) => note(host.id, p.severity, `Inside: ${p.message}`));
    });
    Object.keys(worst).forEach((id) => {
      const cls = `problem-${worst[id].severity}`;
      canvas.addMarker(id, cls);
      state.marked.push([id, cls]);
      if (registry.get(id).waypoints) return;
      const badge = document.createElement('div');
      badge.className = `problem-badge ${cls}`;
      badge.textContent = '!';
      badge.title = worst[id].messages.join('\n');
      get('overlays').add(id, 'problem', { position: { top: -8, right: 8 }, html: badge });
    });
    const list = byId('problem-list');
    list.replaceChildren();
    problems.forEach((p) => {
      const item = document.createElement('li');
      item.className = `problem problem-${p.severity}`;
      const label = document.createElement('span');
      label.className = 'severity';
      label.textContent = SEVERITY_LABEL[p.severity] || 'Warning';
      const target = p.element_id && registry.get(p.element_id);
      const message = document.createElement(target ? 'button' : 'span');
      if (target) {
        message.type = 'button';
        message.className = 'link-button';
        message.dataset.element = p.element_id;
        message.addEventListener('click', () => select(p.element_id));
      }
      message.textContent = p.message;
      item.append(label, ' ', message);
      list.append(item);
    });
    const errors = problems.filter((p) => p.severity === 'error').length;
    const warnings = problems.length - errors;
    state.summary = problems.length
      ? `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`
      : 'no problems';
    byId('problem-count').textContent = String(problems.length);
    byId('problem-summary').textContent = problems.length ? state.summary : 'No problems found.';
  }

  /* --- the properties panel follows the selection --- */

  /* `left`: the fields of the shown element the user has left; the server points out a missing
   * value only in those (and in all of them on the Apply button). */
  const panel = { applied: '', lastSent: '', invalid: false, busy: 0, idle: [], left: new Set(), leftFor: '' };
  const props = byId('props');
  const NOT_EDITED = new Set(['action', 'csrf_token', 'original', 'revision', 'names', 'left']);
  const panelForm = () => props.querySelector('#props-form');

  function snapshot(data) {
    const pairs = [];
    data.forEach((value, name) => { if (!NOT_EDITED.has(name)) pairs.push([name, typeof value === 'string' ? value : '']); });
    return JSON.stringify(pairs);
  }

  /* Edits in the panel not yet in the diagram: typed since the last apply, refused, or in flight. */
  function panelPending() {
    const form = panelForm();
    return !!form && (panel.busy > 0 || panel.invalid || snapshot(new FormData(form)) !== panel.applied);
  }

  function panelIdle() {
    return panel.busy ? new Promise((resolve) => panel.idle.push(resolve)) : Promise.resolve();
  }

  function panelSettled(ctx, sent) {
    const form = panelForm();
    const status = ctx.response ? ctx.response.status : 0;
    const trigger = ctx.response ? ctx.response.headers.get('HX-Trigger') || '' : '';
    if (form && status === 422) {
      panel.invalid = true;
    } else if (form && status === 200 && ctx.request.method === 'GET') {
      panel.left.clear();
      panel.leftFor = form.elements.element_id.value;
      panel.invalid = false;
      panel.lastSent = '';
      panel.applied = snapshot(new FormData(form));
    } else if (form && status === 200 && trigger.includes('bpmn-apply')) {
      const active = document.activeElement;
      const typedSince = active && form.contains(active) && active.name && sent.has(active.name)
        && active.type !== 'checkbox' && active.type !== 'radio' && sent.get(active.name) !== active.value;
      panel.invalid = false;
      panel.applied = typedSince ? snapshot(sent) : snapshot(new FormData(form));
    } else if (form && status === 200) {
      panel.invalid = false;
    }
    showPanelState();
  }

  function showPanelState() {
    if (state.conflict || state.saving || panel.busy) return;
    if (panel.invalid) setStatus('Not applied: a value in the properties panel is not valid', 'error');
    else if (panelPending()) setStatus('The properties panel has changes not applied yet', 'dirty');
    else if (dirty()) setStatus('Unsaved changes', 'dirty');
    else setStatus(`Saved · revision ${state.revision} · ${state.summary}`, 'ok');
  }

  document.addEventListener('htmx:before:request', (event) => {
    const ctx = event.detail && event.detail.ctx;
    if (!ctx || ctx.target !== props) return;
    const body = ctx.request.body;
    const sent = body && typeof body.forEach === 'function' ? body : new FormData();
    if (ctx.request.method === 'POST' && (sent.get('action') || 'apply') === 'apply') {
      /* A blur right after a debounced apply, or Apply after it, sends the same values again;
       * a late duplicate could redo an apply the user has just undone. */
      const revealing = sent.get('action') === 'apply' && props.querySelector('[data-missing-hidden]');
      const values = [snapshot(sent), sent.get('left') || '', revealing ? 'apply' : ''].join('\n');
      if (values === panel.lastSent) {
        event.preventDefault();
        setTimeout(showPanelState, 0);
        return;
      }
      panel.lastSent = values;
    }
    panel.busy += 1;
    const source = event.target;
    const done = (finished) => {
      if (finished.detail.ctx !== ctx) return;
      source.removeEventListener('htmx:finally:request', done);
      panel.busy -= 1;
      panelSettled(ctx, sent);
      if (!panel.busy) panel.idle.splice(0).forEach((resolve) => resolve());
    };
    source.addEventListener('htmx:finally:request', done);
  });

  /* The panel is swapped by morphing (focus and caret stay); keep what the user opened, and what
   * the user chose or typed after the request left: an answer to an older request (a refresh
   * queued behind an apply) must not put back its older values; the change's own request, queued
   * after it, carries the newer ones. */
  let openDetails = [];
  let newer = [];
  const fieldsOf = (form) => Array.from(form.elements).filter((el) => el.name && !NOT_EDITED.has(el.name)
    && !['button', 'submit', 'file'].includes(el.type));

  function changedSince(form, sent) {
    const changed = [];
    fieldsOf(form).forEach((el) => {
      if (el.type === 'radio') {
        if (el.checked && sent.get(el.name) !== el.value) changed.push([el.name, el.value]);
      } else if (el.type === 'checkbox') {
        if (sent.getAll(el.name).includes(el.value) !== el.checked) changed.push([el.name, el.checked]);
      } else {
        const before = sent.get(el.name);
        if (before === null ? el.value !== '' : before !== el.value) changed.push([el.name, el.value]);
      }
    });
    return changed;
  }

  function restore(form, changed) {
    changed.forEach(([name, value]) => {
      fieldsOf(form).filter((el) => el.name === name).forEach((el) => {
        if (el.type === 'radio') el.checked = el.value === value;
        else if (el.type === 'checkbox') el.checked = value;
        else if (el.tagName !== 'SELECT' || Array.from(el.options).some((o) => o.value === value)) el.value = value;
      });
    });
  }

  document.addEventListener('htmx:before:swap', (event) => {
    const ctx = event.detail && event.detail.ctx;
    if (!ctx || ctx.target !== props) return;
    openDetails = Array.from(props.querySelectorAll('details')).map((d) => d.open);
    newer = [];
    const form = panelForm();
    const sent = ctx.request.body;
    if (!form || ctx.request.method === 'GET' || !sent || typeof sent.getAll !== 'function') return;
    if (sent.get('element_id') !== (form.elements.element_id && form.elements.element_id.value)) return;
    newer = changedSince(form, sent);
  });
  document.addEventListener('htmx:after:swap', (event) => {
    const ctx = event.detail && event.detail.ctx;
    if (!ctx || ctx.target !== props || ctx.request.method === 'GET') return;
    props.querySelectorAll('details').forEach((d, i) => { if (openDetails[i]) d.open = true; });
    const form = panelForm();
    if (form && newer.length) restore(form, newer);
    newer = [];
  });

  document.addEventListener('htmx:config:request', (event) => {
    const ctx = event.detail && event.detail.ctx;
    const form = panelForm();
    if (!ctx || ctx.target !== props || ctx.request.method !== 'POST' || !form) return;
    if (panel.leftFor === form.elements.element_id.value) ctx.request.body.set('left', [...panel.left].join(' '));
  });

  /* Leaving a field: from now on the panel says when its value is missing (asking the server
   * at once when some missing value is not shown yet). */
  props.addEventListener('focusout', (event) => {
    const form = panelForm();
    const name = event.target.name;
    if (!form || !form.contains(event.target) || !name || NOT_EDITED.has(name) || state.conflict) return;
    const shown = form.elements.element_id.value;
    if (panel.leftFor !== shown) {
      panel.left.clear();
      panel.leftFor = shown;
    }
    if (panel.left.has(name)) return;
    panel.left.add(name);
    if (props.querySelector('[data-missing-hidden]')) {
      htmx.ajax('POST', form.getAttribute('hx-post'), { source: form, target: '#props', swap: 'innerMorph' });
    }
  });

  ['input', 'change'].forEach((type) => props.addEventListener(type, () => {
    if (panelForm() && !state.conflict) setStatus('The properties panel has changes not applied yet', 'dirty');
  }));

  /* Apply what the panel holds; false when it holds a value the server refused. */
  async function flushPanel() {
    await panelIdle();
    const form = panelForm();
    if (!form || !panelPending()) return true;
    await htmx.ajax('POST', form.getAttribute('hx-post'), { source: form, target: '#props', swap: 'innerMorph' });
    await panelIdle();
    return !panel.invalid;
  }

  function wantedPanel() {
    const selected = get('selection').get();
    return selected.length === 1 && selected[0].businessObject && selected[0].type !== 'label'
      ? panelValues(selected[0])
      : { count: String(selected.length) };
  }

  async function followSelection() {
    if (JSON.stringify(wantedPanel()) === state.panelKey) return;
    const form = panelForm();
    if (form && !(await flushPanel())) {
      const shown = get('elementRegistry').get(form.elements.element_id.value);
      const name = (form.elements.title && form.elements.title.value) || form.elements.element_id.value;
      if (shown && !window.confirm(`“${name}” has a value that is not valid, so it was not applied. Discard it?`)) {
        get('selection').select(shown);
        const bad = props.querySelector('.has-error input, .has-error select, .has-error textarea, [aria-invalid=true]');
        if (bad) bad.focus();
        return;
      }
    }
    const values = wantedPanel();
    const key = JSON.stringify(values);
    if (key === state.panelKey) return;
    state.panelKey = key;
    await htmx.ajax('GET', root.dataset.panelUrl, { source: '#props', target: '#props', swap: 'innerHTML', values: values });
  }

  let panelTimer = null;
  let panelQueue = Promise.resolve();
  function requestPanel() {
    clearTimeout(panelTimer);
    panelTimer = setTimeout(() => {
      panelQueue = panelQueue.then(followSelection).catch(() => {});
    }, 60);
  }

  /* An expression's live check reads the diagram as drawn (saved or not) for its data
   * references, as the validator will. */
  let canvasXml = '';
  async function refreshCanvasXml() {
    try {
      canvasXml = (await modeler.saveXML()).xml;
    } catch (error) {
      canvasXml = '';
    }
  }
  document.addEventListener('htmx:config:request', (event) => {
    const ctx = event.detail && event.detail.ctx;
    if (!ctx || !ctx.target || !ctx.target.classList.contains('check-result') || !canvasXml) return;
    ctx.request.body.set('canvas_xml', canvasXml);
  });

  /* A click on a label (an event's or gateway's name, a flow's title) selects what it names,
   * so its properties open; the label itself can still be dragged. */
  modeler.on('selection.changed', 2000, (event) => {
    if (!event.newSelection.some((element) => element.labelTarget)) return;
    const named = event.newSelection.map((element) => element.labelTarget || element);
    get('selection').select(Array.from(new Set(named)));
  });
  modeler.on('selection.changed', requestPanel);
  modeler.on('commandStack.changed', () => {
    refreshCanvasXml();
    state.edits += 1;
    setStatus('Unsaved changes', 'dirty');
    schedule();
    requestPanel();
  });
  /* Taking the multi-instance marker off (the replace menu's toggle) also drops its settings. */
  modeler.on('commandStack.element.updateProperties.postExecute', (event) => {
    const { element, properties } = event.context;
    if (!properties || !('loopCharacteristics' in properties) || properties.loopCharacteristics) return;
    const bo = element.businessObject;
    const config = blob(bo, CONFIG);
    if (!config || !('multiInstance' in config || 'loop' in config)) return;
    delete config.multiInstance;
    delete config.loop;
    const moddle = get('moddle');
    const values = extensionValues(bo).filter((value) => value.$type !== CONFIG);
    if (Object.keys(config).length) values.push(moddle.create(CONFIG, { body: JSON.stringify(sorted(config)) }));
    get('modeling').updateProperties(element, {
      extensionElements: values.length ? moddle.create('bpmn:ExtensionElements', { values: values }) : undefined,
    });
  });
  modeler.on('elements.changed', (event) => {
    event.elements.forEach((element) => {
      const di = element.di;
      if (di && di.get && di.get('flowdesk:generated')) di.set('flowdesk:generated', undefined);
    });
  });

  /* Fit the drawing into the canvas (never above 100 %), clear of the palette on the left. */
  function fit() {
    const palette = document.querySelector('.djs-palette');
    const left = palette ? palette.offsetLeft + palette.offsetWidth : 0;
    window.flowdeskZoom.fit(get('canvas'), { left: left });
  }

  /* Palette entries are buttons in the tab order, each named by its tooltip; Enter or Space on
   * a shape's entry creates it without the mouse (see `createFromKeyboard`). */
  function namePaletteEntries() {
    const entries = get('palette').getEntries();
    const container = document.querySelector('.djs-palette');
    if (container) {
      container.setAttribute('role', 'group');
      container.setAttribute('aria-label', 'Palette: tools, and shapes to add to the diagram');
    }
    document.querySelectorAll('.djs-palette .entry').forEach((entry) => {
      const known = entries[entry.dataset.action];
      const name = (known && known.title) || entry.getAttribute('title');
      if (!name) return;
      entry.setAttribute('title', name);
      entry.setAttribute('aria-label', name);
      entry.setAttribute('role', 'button');
      entry.setAttribute('tabindex', '0');
    });
  }

  /* The shapes a palette entry creates, the first being the one placed and selected. */
  function paletteShapes(action) {
    return PALETTE_ENTRY[action] ? entryShapes(get('elementFactory'), PALETTE_ENTRY[action]) : null;
  }

  const followsFlow = (element) => !!element && !element.waypoints && element.type !== 'label'
    && !!element.businessObject && element.businessObject.$instanceOf('bpmn:FlowNode')
    && element.type !== 'bpmn:EndEvent' && !element.businessObject.triggeredByEvent;
  const takesFlowIn = (shape) => !['bpmn:StartEvent', 'bpmn:BoundaryEvent'].includes(shape.type)
    && !shape.businessObject.triggeredByEvent;

  /* A palette entry used from the keyboard: the shape follows the selected element (connected,
   * as the context pad appends), goes on the border of the selected activity (boundary events),
   * or else into the first free spot in view; either way it is selected, so the panel opens. */
  function createFromKeyboard(action) {
    const shapes = paletteShapes(action);
    if (!shapes) return false;
    const [shape, ...inner] = shapes;
    const chosen = get('selection').get();
    const selected = chosen.length === 1 ? chosen[0] : null;
    const modeling = get('modeling');
    if (shape.type === 'bpmn:BoundaryEvent' && !(selected && isHost(selected.businessObject))) {
      setStatus('Select a task, sub-process or call activity first: this event goes on its border.', 'error');
      return true;
    }
    get('commandStack').execute('flowdesk.apply', {
      run: () => {
        if (shape.type === 'bpmn:BoundaryEvent') {
          const taken = (selected.attachers || []).map((a) => a.x + a.width / 2);
          const x = [0.3, 0.6, 0.8, 0.15, 0.45].map((f) => selected.x + selected.width * f)
            .find((spot) => taken.every((other) => Math.abs(other - spot) > shape.width)) || selected.x + selected.width / 2;
          modeling.createShape(shape, { x: x, y: selected.y + selected.height }, selected, { attach: true });
        } else if (followsFlow(selected) && takesFlowIn(shape)) {
          get('autoPlace').append(selected, shape);
        } else {
          const palette = document.querySelector('.djs-palette');
          const position = get('placement').inView(shape, palette ? palette.offsetLeft + palette.offsetWidth : 0);
          modeling.createShape(shape, position, get('canvas').getRootElement());
        }
        inner.forEach((child) => modeling.createShape(child, { x: shape.x + child.x + child.width / 2, y: shape.y + child.y + child.height / 2 }, shape));
      },
    });
    get('selection').select(shape);
    get('canvas').scrollToElement(shape);
    return true;
  }

  byId('canvas').addEventListener('keydown', (event) => {
    const entry = event.target.closest && event.target.closest('.djs-palette .entry');
    if (!entry || !['Enter', ' '].includes(event.key)) return;
    event.preventDefault();
    event.stopPropagation();
    if (!createFromKeyboard(entry.dataset.action)) entry.click();
  });
  modeler.on('palette.changed', namePaletteEntries);

  (async function start() {
    try {
      await modeler.importXML(readJSON('draft-xml'));
    } catch (error) {
      setStatus(`The draft could not be drawn: ${error.message}`, 'error');
      return;
    }
    performance.mark('flowdesk:drawn');
    refreshCanvasXml();
    fit();
    window.flowdeskZoom.controls(get('canvas'), byId('canvas'), fit);
    namePaletteEntries();
    byId('canvas').querySelector('.djs-container > svg').setAttribute('aria-label', 'Process diagram: Delete, Ctrl+Z and the other shortcuts work here. The Outline view edits the same draft with the keyboard.');
    showProblems(readJSON('draft-problems'));
    showCoverage(readJSON('draft-coverage'));
    setStatus(`Saved · revision ${state.revision} · ${state.summary}`, 'ok');
    root.dataset.ready = 'true';
    performance.mark('flowdesk:ready');
  }());
}());
