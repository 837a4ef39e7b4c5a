//! The one sweep the observer serves at a time: its session, its target and its open window.
//! A session is held until its sweep closes it or goes [`crate::server::LEASE`] without a
//! request (a sweep killed mid-run); meanwhile any other sweep is refused (409).
use chokepoint_observe::{CpuScope, ObservedWindow, TargetSpec};
use std::time::{Duration, Instant};

/// The sweep being served.
#[derive(Debug)]
pub(crate) struct Held {
    pub id: String,
    pub last_seen: Instant,
    pub spec: TargetSpec,
    /// The forwarder on the sweep's port, followed when the session opened.
    pub forwarder: Option<chokepoint_result::Forwarder>,
    pub interval: Duration,
    pub window: Option<ObservedWindow>,
}

impl Held {
    pub fn cpu_scope(&self) -> CpuScope {
        CpuScope::Tree(self.spec.roots.clone())
    }
}

/// Why a step request was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Another sweep holds the observer (409).
    Busy { idle_for: Duration },
    /// The request names no session, or one that ended (409).
    NotYours,
}

#[derive(Debug, Default)]
pub(crate) struct Sessions {
    held: Option<Held>,
}

impl Sessions {
    /// Ends a session idle for `lease` or more; returns its open window, to be closed.
    pub fn expire(&mut self, now: Instant, lease: Duration) -> Option<ObservedWindow> {
        let idle = self
            .held
            .as_ref()
            .is_some_and(|held| now.duration_since(held.last_seen) >= lease);
        if idle {
            return self.held.take().and_then(|held| held.window);
        }
        None
    }

    /// Whether a new session could be held now.
    pub fn open_check(&self, now: Instant) -> Result<(), Refusal> {
        match &self.held {
            Some(held) => Err(Refusal::Busy {
                idle_for: now.duration_since(held.last_seen),
            }),
            None => Ok(()),
        }
    }

    /// Holds `new` unless another session is held.
    pub fn open(&mut self, new: Held, now: Instant) -> Result<(), Refusal> {
        self.open_check(now)?;
        self.held = Some(new);
        Ok(())
    }

    /// The session `id` names, marked as seen `now`.
    pub fn current(&mut self, id: Option<&str>, now: Instant) -> Result<&mut Held, Refusal> {
        match (&mut self.held, id) {
            (Some(held), Some(id)) if held.id == id => {
                held.last_seen = now;
                Ok(held)
            }
            _ => Err(Refusal::NotYours),
        }
    }

    /// Ends the session `id` names; returns its open window, to be closed.
    pub fn close(&mut self, id: Option<&str>) -> Result<Option<ObservedWindow>, Refusal> {
        self.current(id, Instant::now())?;
        Ok(self.held.take().and_then(|held| held.window))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(id: &str, at: Instant) -> Held {
        Held {
            id: id.into(),
            last_seen: at,
            spec: TargetSpec::default(),
            forwarder: None,
            interval: Duration::from_millis(250),
            window: None,
        }
    }

    #[test]
    fn one_sweep_at_a_time_until_it_closes_or_its_lease_ends() {
        let t0 = Instant::now();
        let lease = Duration::from_secs(600);
        let mut sessions = Sessions::default();
        sessions.open(held("a", t0), t0).unwrap();
        // A second sweep is refused while the first holds the observer.
        let later = t0 + Duration::from_secs(5);
        assert_eq!(
            sessions.open(held("b", later), later),
            Err(Refusal::Busy {
                idle_for: Duration::from_secs(5)
            })
        );
        // Only the holder's id reaches the session; a request keeps it alive.
        assert_eq!(
            sessions.current(Some("b"), later).err(),
            Some(Refusal::NotYours)
        );
        assert_eq!(sessions.current(None, later).err(), Some(Refusal::NotYours));
        assert!(sessions.current(Some("a"), later).is_ok());
        assert!(sessions.expire(t0 + lease, lease).is_none());
        assert!(sessions.open(held("b", t0 + lease), t0 + lease).is_err());
        // Idle for the whole lease: gone, and the next sweep gets the observer.
        let idle = later + lease;
        sessions.expire(idle, lease);
        assert!(sessions.current(Some("a"), idle).is_err());
        sessions.open(held("b", idle), idle).unwrap();
        // Closed by its sweep: free at once.
        assert_eq!(sessions.close(Some("a")).err(), Some(Refusal::NotYours));
        assert!(sessions.close(Some("b")).is_ok());
        sessions.open(held("c", idle), idle).unwrap();
    }
}
