/**
 * Insight into running compartments: what state each is in, what limit its traffic needs, and a
 * JSON snapshot of both for an endpoint or a dashboard. Nothing here changes a compartment; it
 * reads their {@linkplain io.bulkhead.Compartment#stats() stats} and tells a person what they mean.
 *
 * <h2>Wiring</h2>
 *
 * One {@link io.bulkhead.insight.Insight} watches a registry (it follows adds and removes) and is
 * sampled on a schedule the application owns; each sample reads every compartment's stats once and
 * feeds both the diagnosis and the sizing advice:
 *
 * <pre>{@code
 * Insight insight = Insight.create();
 * insight.watch(registry);
 * scheduler.scheduleAtFixedRate(insight::sample, 1, 1, TimeUnit.SECONDS);
 *
 * insight.diagnosis("llm").ifPresent(d -> log.info(d.explanation()));
 * insight.advice("llm").ifPresent(a -> log.info(a.summary()));
 * String json = insight.snapshot().toJson();   // the /bulkheads document
 * }</pre>
 *
 * <h2>What is here</h2>
 *
 * <ul>
 *   <li>{@link io.bulkhead.insight.Diagnosis}: healthy, saturated, limit too low, or dependency
 *       degrading, with the figures that decided it; the thresholds are a {@link
 *       io.bulkhead.insight.Diagnostician}'s.
 *   <li>{@link io.bulkhead.insight.SizingAdvice}: the observed arrival rate and latency, the need
 *       they imply (Little's law) and the limit a {@link io.bulkhead.insight.SizingAdvisor}
 *       recommends with the compartment's headroom. The arithmetic alone, for sizing before there
 *       is traffic, is {@link io.bulkhead.Sizing} in the core package.
 *   <li>{@link io.bulkhead.insight.Snapshot}: settings, the four numbers, counters, latency,
 *       diagnosis, advice and the resource behind each compartment (through a {@link
 *       io.bulkhead.insight.ResourceView}), as one JSON document.
 * </ul>
 *
 * <p>Everything here is advisory and costs the compartments nothing between samples: a compartment
 * does not know it is watched.
 */
@NullMarked
package io.bulkhead.insight;

import org.jspecify.annotations.NullMarked;
