//! The what-if after a sweep (`sweep --what-if M`): when the finding is a pool held for the
//! mock's delay, a step or two with the mock's delay scaled so that the pool found serves as a
//! pool of M would (`chokepoint_diagnose::what_if` decides the delay and reads the steps), then
//! the delay put back — also when the steps fail or are cancelled. The what-if goes into the
//! diagnosis as `what_if`.
use crate::downstream::MockClient;
use crate::progress::SweepEvent;
use crate::sweep::{drain, run_step, SweepConfig};
use chokepoint_diagnose::what_if::{self as decide, Emulation, Plan, PoolSize};
use chokepoint_result::{SweepResult, WhatIf};
use tokio_util::sync::CancellationToken;

/// Puts the mock's delay back when dropped, unless it was put back already.
struct DelayBack<'m> {
    mock: &'m MockClient,
    delay_ms: Option<f64>,
    armed: bool,
}

impl DelayBack<'_> {
    fn restore(mut self) -> anyhow::Result<()> {
        self.armed = false;
        self.mock.set_fixed_delay_ms(self.delay_ms)
    }
}

impl Drop for DelayBack<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.mock.set_fixed_delay_ms(self.delay_ms);
        }
    }
}

/// Runs the what-if of `size` on the finished, diagnosed `result` and puts it in its diagnosis.
/// A what-if with nothing to predict (the pool found is already M) is told as
/// [`SweepEvent::WhatIfRefused`] and leaves no what-if.
pub(crate) fn run(
    config: &SweepConfig,
    size: PoolSize,
    mock: Option<&MockClient>,
    result: &mut SweepResult,
    cancel: &CancellationToken,
    on_event: &mut dyn FnMut(SweepEvent<'_>),
) -> anyhow::Result<()> {
    let Some(diagnosis) = result.diagnosis.as_ref() else {
        return Ok(());
    };
    let mock_delay_ms = match mock {
        Some(mock) => mock.fixed_delay_ms()?,
        None => None,
    };
    let bound = decide::cpu_bound(diagnosis, &result.steps, &result.context);
    let name = decide::pool_name(diagnosis);
    let max_clients = result.context.max_clients.max(config.max_clients);
    let what_if = match (
        decide::plan(diagnosis, &result.context, size, mock_delay_ms, max_clients),
        mock,
    ) {
        (Plan::Refuse(refusal), _) => {
            on_event(SweepEvent::WhatIfRefused(refusal));
            return Ok(());
        }
        (Plan::Emulate(emulation), Some(mock)) => {
            on_event(SweepEvent::Emulating(&emulation));
            let steps = emulate(config, &emulation, mock, cancel, on_event)?;
            decide::judge(&emulation, steps, bound, result.context.cores, name)
        }
        (
            Plan::BoundOnly {
                pool,
                from_pool,
                why,
            },
            _,
        ) => decide::bound_only(pool, from_pool, why, bound, name),
        (Plan::Emulate(_), None) => decide::bound_only(
            None,
            None,
            chokepoint_result::NotEmulated::NoMock,
            bound,
            name,
        ),
    };
    put(result, what_if);
    Ok(())
}

fn put(result: &mut SweepResult, what_if: WhatIf) {
    if let Some(diagnosis) = result.diagnosis.as_mut() {
        diagnosis.what_if = Some(what_if);
    }
}

/// The emulated steps, the mock's delay set for them and put back after; empty when cancelled.
fn emulate(
    config: &SweepConfig,
    emulation: &Emulation,
    mock: &MockClient,
    cancel: &CancellationToken,
    on_event: &mut dyn FnMut(SweepEvent<'_>),
) -> anyhow::Result<Vec<chokepoint_result::EmulatedStep>> {
    mock.set_fixed_delay_ms(Some(emulation.emulated_delay_ms))?;
    let back = DelayBack {
        mock,
        delay_ms: Some(emulation.delay_ms),
        armed: true,
    };
    let mut steps = Vec::new();
    for &clients in &emulation.clients {
        if cancel.is_cancelled() {
            break;
        }
        match run_step(config, clients, Some(mock), None, cancel, on_event)? {
            Some(step) => {
                on_event(SweepEvent::EmulatedStep(&step));
                steps.push(decide::emulated_step(&step));
            }
            None => {
                steps.clear();
                break;
            }
        }
        drain(config, Some(mock), cancel);
    }
    back.restore()?;
    Ok(steps)
}
