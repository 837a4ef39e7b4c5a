//! `{{#assign 'name'}}...{{/assign}}`: renders the block, trims it and names the text, so that
//! `{{name}}` later in the template writes it (Handlebars.java's `AssignHelper`, which WireMock
//! registers). The value goes into the template's root context, so it is seen from the point of
//! assignment on, at the top level and inside later blocks by `{{@root.name}}`.
use handlebars::{
    Context, Handlebars, Helper, HelperDef, HelperResult, Output, RenderContext, RenderErrorReason,
    Renderable,
};
use serde_json::Value;

pub(super) struct AssignHelper;

impl HelperDef for AssignHelper {
    fn call<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        registry: &'reg Handlebars<'reg>,
        context: &'rc Context,
        rc: &mut RenderContext<'reg, 'rc>,
        _: &mut dyn Output,
    ) -> HelperResult {
        let Some(Value::String(name)) = h.param(0).map(|p| p.value()) else {
            return Err(RenderErrorReason::Other(
                "assign: give the variable's name, e.g. {{#assign 'total'}}...{{/assign}}".into(),
            )
            .into());
        };
        let value = match h.template() {
            Some(block) => block.renders(registry, context, rc)?,
            None => String::new(),
        };
        let mut data = rc
            .context()
            .map_or_else(|| context.data().clone(), |c| c.data().clone());
        if let Value::Object(root) = &mut data {
            root.insert(name.clone(), Value::String(value.trim().to_string()));
        }
        rc.set_context(Context::wraps(data)?);
        Ok(())
    }
}
