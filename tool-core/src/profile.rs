//! Schema profiles: pure transforms of the canonical schema into what one provider's strict or
//! restricted mode accepts, and checkers that a schema obeys each profile's rules.
//!
//! What a profile cannot express is not dropped silently: the constraint is written into the
//! description, in words, so the model still reads it. Validation always stays against the
//! canonical schema.
//!
//! Each profile lives in its API's module of [`crate::provider`], beside the declarations that
//! use it (`openai-strict` is shared by OpenAI Chat and Responses); this module shows them
//! together.

pub use crate::provider::profiles::*;
