/**
 * The fault-injection harness: candidate processes
 * ({@link io.github.leaderelection.chaos.ChaosNode}) elect a leader on a real store
 * through proxies of the harness ({@link io.github.leaderelection.chaos.ChaosRun}), which
 * kills, pauses, cuts, slows and restarts them and the store, and a checker
 * ({@link io.github.leaderelection.chaos.Checker}) that proves from their records that no
 * two of them believed they led at once and that terms only grew.
 */
package io.github.leaderelection.chaos;
