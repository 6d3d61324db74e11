//! The retrieval prefilter: only the `k` candidates a retriever ranks best for the query are
//! scored by the model (feature `retrieval`).

use std::collections::HashMap;

use serde_json::json;
use tool_core::{ToolMetadata, ToolSpec};
use tool_retrieval::{Reason, RetrieveOptions, Retriever};

use crate::declared::{DeclaredTool, ToolsFile};
use crate::Prepared;

pub(crate) enum PrefilterSetting {
    Lexical(usize),
    Given(Box<Retriever>, usize),
}

pub(crate) struct Prefilter {
    retriever: Retriever,
    k: usize,
    /// Retrieval name (`Type/tool`) -> position among the router's tools.
    positions: HashMap<String, usize>,
}

/// The name a declared tool has for retrieval: unique, since a name is unique within its type
/// and site (`Type/tool`, or `site/Type/tool` for a site's own tool).
fn retrieval_name(tool: &DeclaredTool) -> String {
    match &tool.site {
        Some(site) => format!("{site}/{}/{}", tool.schema_type, tool.name),
        None => format!("{}/{}", tool.schema_type, tool.name),
    }
}

/// A declared tool as retrieval reads it: its prompt as the description, its examples.
fn retrieval_spec(tool: &DeclaredTool) -> ToolSpec {
    ToolSpec {
        name: retrieval_name(tool),
        description: tool.prompt.clone(),
        parameters: json!({ "type": "object" }),
        output_schema: None,
        metadata: ToolMetadata {
            selectable: true,
            keywords: vec![tool.name.replace(['_', '-'], " ")],
            examples: tool.examples.clone(),
            ..ToolMetadata::default()
        },
    }
}

impl ToolsFile {
    /// The enabled tools as retrieval reads them (named `Type/tool`, or `site/Type/tool` for
    /// a site's own tool; the prompt as the
    /// description, the examples), to build a retriever for
    /// [`RouterBuilder::prefilter_with`](crate::RouterBuilder::prefilter_with).
    pub fn retrieval_specs(&self) -> Vec<ToolSpec> {
        self.enabled().map(retrieval_spec).collect()
    }
}

impl Prefilter {
    pub(crate) fn new(setting: PrefilterSetting, tools: &[Prepared]) -> Self {
        let positions = tools
            .iter()
            .enumerate()
            .map(|(i, p)| (retrieval_name(&p.tool), i))
            .collect();
        let (retriever, k) = match setting {
            PrefilterSetting::Lexical(k) => {
                let specs: Vec<ToolSpec> = tools.iter().map(|p| retrieval_spec(&p.tool)).collect();
                (Retriever::lexical(&specs), k)
            }
            PrefilterSetting::Given(retriever, k) => (*retriever, k),
        };
        Prefilter {
            retriever,
            k,
            positions,
        }
    }

    /// The candidates to score: the best `k` by retrieval, topped up in file order when
    /// retrieval ranks fewer (a query that shares no word with any tool). All of them when
    /// retrieval fails. Whichever they are, the model scores them against the threshold: a
    /// top-up never wins unscored.
    pub(crate) async fn keep(&self, query: &str, candidates: &[usize]) -> Vec<usize> {
        if candidates.len() <= self.k {
            return candidates.to_vec();
        }
        let options = RetrieveOptions {
            match_count: self.positions.len(),
            ..RetrieveOptions::default()
        };
        let ranked = match self.retriever.retrieve(query, &options).await {
            Ok(ranked) => ranked,
            Err(error) => {
                tracing::warn!(%error, "the router's prefilter failed; every candidate is scored");
                return candidates.to_vec();
            }
        };
        let mut kept: Vec<usize> = ranked
            .iter()
            .filter(|r| r.reason == Reason::Ranked || r.reason == Reason::Forced)
            .filter_map(|r| self.positions.get(&r.name).copied())
            .filter(|i| candidates.contains(i))
            .take(self.k)
            .collect();
        for &i in candidates {
            if kept.len() >= self.k {
                break;
            }
            if !kept.contains(&i) {
                kept.push(i);
            }
        }
        kept
    }
}
