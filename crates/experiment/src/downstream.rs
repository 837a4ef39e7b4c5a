//! Talks to a running `chokepoint mock` over its HTTP admin endpoints: reset the window, read
//! what it saw. One short request at a time, each on its own connection with a timeout.
use anyhow::Context;
use chokepoint_result::MockStats;
use std::time::Duration;

/// A client of one mock's `/__chokepoint/` endpoints.
#[derive(Debug, Clone)]
pub struct MockClient {
    base: String,
    agent: ureq::Agent,
}

impl MockClient {
    /// A client of the mock at `base` (`http://127.0.0.1:9090`).
    pub fn new(base: &str) -> anyhow::Result<MockClient> {
        let base = base.trim_end_matches('/').to_string();
        if !base.starts_with("http://") {
            anyhow::bail!("--mock {base}: give the mock's base URL, such as http://127.0.0.1:9090");
        }
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(15))
            .max_idle_connections(0)
            .build();
        Ok(MockClient { base, agent })
    }

    /// The mock's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Starts a new stats window.
    pub fn reset(&self) -> anyhow::Result<()> {
        let url = format!("{}/__chokepoint/reset", self.base);
        self.agent
            .post(&url)
            .call()
            .with_context(|| format!("cannot reset the mock at {url}"))?;
        Ok(())
    }

    /// What the mock saw since the last reset.
    pub fn stats(&self) -> anyhow::Result<MockStats> {
        let url = format!("{}/__chokepoint/stats", self.base);
        let response = self
            .agent
            .get(&url)
            .call()
            .with_context(|| format!("cannot read the mock's stats at {url}"))?;
        response.into_json::<MockStats>().with_context(|| {
            format!("{url} did not answer chokepoint mock stats: is it a chokepoint mock?")
        })
    }

    /// The mock's global delay now, ms (`GET /__admin/settings`); `None` when it has none.
    pub fn fixed_delay_ms(&self) -> anyhow::Result<Option<f64>> {
        Ok(self.stats()?.config.fixed_delay_ms)
    }

    /// Sets the mock's global delay, ms, or removes it (`POST /__admin/settings`).
    pub fn set_fixed_delay_ms(&self, delay_ms: Option<f64>) -> anyhow::Result<()> {
        let url = format!("{}/__admin/settings", self.base);
        self.agent
            .post(&url)
            .send_json(serde_json::json!({ "fixedDelay": delay_ms }))
            .with_context(|| format!("cannot set the mock's delay at {url}"))?;
        Ok(())
    }
}
