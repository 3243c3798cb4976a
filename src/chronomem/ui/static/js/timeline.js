// The two time sliders. Each stops at the moments where something changes on its timeline (from
// /explorer/timeline), plus a last stop, "now" (unset). Arrow keys step from change to change; the
// text box beside each takes any ISO 8601 moment, and "now" clears it.

import { moment } from "./dom.js";

// A day means its midnight UTC; a moment without a zone is UTC.
function withZone(text) {
  if (/^\d{4}-\d\d-\d\d$/.test(text)) return `${text}T00:00:00Z`;
  return /([zZ]|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`;
}

class TimeSlider {
  constructor(prefix, onChange) {
    this.range = document.getElementById(`${prefix}-range`);
    this.text = document.getElementById(prefix);
    this.stops = [];
    this.value = null; // an ISO string, or null for now
    this.onChange = onChange;
    this.range.addEventListener("input", () => this.#fromRange());
    this.text.addEventListener("change", () => this.#fromText());
    this.text.addEventListener("keydown", (event) => { if (event.key === "Enter") this.#fromText(); });
    document.getElementById(`${prefix}-now`).addEventListener("click", () => this.set(null));
  }

  setStops(stops) {
    this.stops = stops;
    this.range.max = String(stops.length);
    this.#show();
  }

  set(value) {
    this.value = value;
    this.#show();
    this.onChange();
  }

  #fromRange() {
    const index = Number(this.range.value);
    this.set(index >= this.stops.length ? null : this.stops[index]);
  }

  #fromText() {
    const typed = this.text.value.trim();
    if (!typed || typed === "now") return this.set(null);
    const iso = withZone(typed);
    if (Number.isNaN(new Date(iso).getTime())) {
      this.text.setCustomValidity("not a date: use ISO 8601, e.g. 2024-05-01 or 2024-05-01T10:00:00Z");
      this.text.reportValidity();
      return undefined;
    }
    this.text.setCustomValidity("");
    return this.set(iso); // the text as typed: microseconds matter on T′
  }

  #show() {
    if (this.value === null) {
      this.range.value = String(this.stops.length);
      this.text.value = "";
      this.range.setAttribute("aria-valuetext", "now");
      return;
    }
    const at = new Date(this.value).getTime();
    let index = 0;
    while (index + 1 < this.stops.length && new Date(this.stops[index + 1]).getTime() <= at) index += 1;
    this.range.value = String(index);
    this.text.value = this.value;
    this.range.setAttribute("aria-valuetext", moment(this.value));
  }
}

export class TimeControls {
  constructor(onChange) {
    this.asOf = new TimeSlider("as-of", onChange);
    this.knownAt = new TimeSlider("known-at", onChange);
    this.superseded = document.getElementById("superseded");
    this.superseded.addEventListener("change", onChange);
  }

  setTimeline(timeline) {
    this.asOf.setStops(timeline.world);
    this.knownAt.setStops(timeline.system);
  }

  // What the API takes: as_of, known_at (unset = now) and whether to show superseded facts.
  current() {
    return { asOf: this.asOf.value, knownAt: this.knownAt.value, superseded: this.superseded.checked };
  }
}
