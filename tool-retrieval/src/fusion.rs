//! Fusing the lexical and dense rankings of a hybrid retriever.

use std::collections::HashMap;

use super::RetrieveError;

/// How two rankings become one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// The rule.
    pub rule: FusionRule,
    /// How many of each ranking are fused.
    pub depth: usize,
}

/// A fusion rule. [`Fusion::rrf`] and [`Fusion::blend`] check its value; one written out is
/// not checked, and outside its range ranks badly or not at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FusionRule {
    /// Reciprocal rank fusion: the sum of `1 / (k + rank)` over the rankings.
    Rrf {
        /// The damping constant (60 in the original paper): a finite number, 0 or more. Under
        /// 0, the first of a ranking scores a division by zero and is left out.
        k: f32,
    },
    /// `weight * bm25 / max_bm25 + (1 - weight) * cosine`.
    Blend {
        /// The weight of the lexical score, from 0 to 1. Past 1, the dense ranking counts
        /// against a tool.
        lexical_weight: f32,
    },
}

impl Default for Fusion {
    /// Tuned on the MetaTool development set (see the README).
    fn default() -> Self {
        Fusion {
            rule: FusionRule::Blend {
                lexical_weight: 0.1,
            },
            depth: 50,
        }
    }
}

impl Fusion {
    /// Reciprocal rank fusion with damping constant `k` at the default depth; `k` not a finite
    /// number of 0 or more is refused ([`RetrieveError::InvalidFusion`]).
    ///
    /// ```
    /// use tool_retrieval::Fusion;
    /// assert!(Fusion::rrf(60.0).is_ok());
    /// assert!(Fusion::rrf(-1.0).is_err());
    /// ```
    pub fn rrf(k: f32) -> Result<Self, RetrieveError> {
        if !(k.is_finite() && k >= 0.0) {
            return Err(RetrieveError::InvalidFusion(format!(
                "the RRF constant must be a finite number of 0 or more, not {k}"
            )));
        }
        Ok(Fusion {
            rule: FusionRule::Rrf { k },
            ..Fusion::default()
        })
    }

    /// The blend of normalized BM25 and cosine with `lexical_weight` at the default depth; a
    /// weight not from 0 to 1 is refused ([`RetrieveError::InvalidFusion`]).
    pub fn blend(lexical_weight: f32) -> Result<Self, RetrieveError> {
        // Written so that NaN, which compares false with everything, is refused too.
        if !(0.0..=1.0).contains(&lexical_weight) {
            return Err(RetrieveError::InvalidFusion(format!(
                "the blend's lexical weight must be from 0 to 1, not {lexical_weight}"
            )));
        }
        Ok(Fusion {
            rule: FusionRule::Blend { lexical_weight },
            ..Fusion::default()
        })
    }

    /// Fuses rankings of `(index, score)`, each best first; the result is best first. Entries
    /// whose score is not a finite number (a store's NaN for a zero vector) are left out: they
    /// say nothing of relevance, and would sort before every real score.
    pub fn fuse(
        &self,
        lexical: &[(usize, f32)],
        dense: &[(usize, f32)],
        _total: usize,
    ) -> Vec<(usize, f32)> {
        let finite = |ranking: &[(usize, f32)]| -> Vec<(usize, f32)> {
            ranking
                .iter()
                .copied()
                .filter(|(_, s)| s.is_finite())
                .collect()
        };
        let (lexical, dense) = (finite(lexical), finite(dense));
        let (lexical, dense) = (lexical.as_slice(), dense.as_slice());
        let mut fused: HashMap<usize, f32> = HashMap::new();
        match self.rule {
            FusionRule::Rrf { k } => {
                for ranking in [lexical, dense] {
                    for (rank, &(index, _)) in ranking.iter().take(self.depth).enumerate() {
                        *fused.entry(index).or_default() += 1.0 / (k + rank as f32 + 1.0);
                    }
                }
            }
            FusionRule::Blend { lexical_weight } => {
                let max = lexical.first().map_or(1.0, |(_, s)| s.max(f32::EPSILON));
                for &(index, score) in lexical.iter().take(self.depth) {
                    *fused.entry(index).or_default() += lexical_weight * score / max;
                }
                for &(index, score) in dense.iter().take(self.depth) {
                    *fused.entry(index).or_default() += (1.0 - lexical_weight) * score;
                }
            }
        }
        let mut ranked: Vec<(usize, f32)> =
            fused.into_iter().filter(|(_, s)| s.is_finite()).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_rewards_agreement_between_rankings() {
        let fusion = Fusion {
            rule: FusionRule::Rrf { k: 60.0 },
            depth: 10,
        };
        let lexical = [(1, 9.0), (2, 5.0), (3, 1.0)];
        let dense = [(2, 0.9), (4, 0.8), (1, 0.1)];
        let fused = fusion.fuse(&lexical, &dense, 5);
        assert_eq!(
            fused[0].0, 2,
            "second and first beats first and third: {fused:?}"
        );
        assert_eq!(fused[1].0, 1);
    }

    #[test]
    fn scores_that_are_not_finite_are_left_out_not_ranked_first() {
        let lexical = [(1, f32::NAN), (2, 5.0), (5, f32::INFINITY)];
        let dense = [(3, f32::NAN), (2, 0.5), (4, 0.4), (5, f32::NEG_INFINITY)];
        for rule in [
            FusionRule::Rrf { k: 60.0 },
            FusionRule::Blend {
                lexical_weight: 0.1,
            },
        ] {
            let fused = Fusion { rule, depth: 10 }.fuse(&lexical, &dense, 6);
            let order: Vec<usize> = fused.iter().map(|(i, _)| *i).collect();
            assert_eq!(order, [2, 4], "{rule:?}: {fused:?}");
            assert!(fused.iter().all(|(_, s)| s.is_finite()), "{rule:?}");
        }
    }

    #[test]
    fn a_fusion_that_would_drop_or_invert_rankings_is_refused() {
        for k in [-1.0, -0.5, f32::NAN, f32::INFINITY] {
            assert!(Fusion::rrf(k).is_err(), "rrf:{k}");
        }
        for weight in [-0.1, 1.5, 2.0, f32::NAN, f32::INFINITY] {
            assert!(Fusion::blend(weight).is_err(), "blend:{weight}");
        }
        assert_eq!(
            Fusion::rrf(-1.0).unwrap_err(),
            RetrieveError::InvalidFusion(
                "the RRF constant must be a finite number of 0 or more, not -1".into()
            )
        );
        assert_eq!(
            Fusion::blend(0.0).unwrap().rule,
            FusionRule::Blend {
                lexical_weight: 0.0
            }
        );
        assert!(Fusion::blend(1.0).is_ok() && Fusion::rrf(0.0).is_ok());
        assert_eq!(Fusion::rrf(60.0).unwrap().depth, Fusion::default().depth);
    }

    #[test]
    fn blend_weighs_normalized_lexical_against_cosine() {
        let fusion = Fusion {
            rule: FusionRule::Blend {
                lexical_weight: 0.5,
            },
            depth: 10,
        };
        let fused = fusion.fuse(&[(1, 10.0), (2, 5.0)], &[(2, 0.9), (1, 0.2)], 3);
        // 1: 0.5 * 1.0 + 0.5 * 0.2 = 0.6; 2: 0.5 * 0.5 + 0.5 * 0.9 = 0.7
        assert_eq!(fused[0].0, 2);
        assert!(
            (fused[0].1 - 0.7).abs() < 1e-6 && (fused[1].1 - 0.6).abs() < 1e-6,
            "{fused:?}"
        );
    }
}
