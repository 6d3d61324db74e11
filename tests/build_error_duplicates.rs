//! Two `#[ai_tool]`s with one name anywhere in the binary: `build()` names both.
//! (A binary of its own, since registration is global to the binary.)

use ai_tool::prelude::*;

mod billing {
    use super::*;
    /// Looks up an invoice.
    #[ai_tool(name = "lookup")]
    pub fn lookup_invoice(id: u32) -> u32 {
        id
    }
}

mod shipping {
    use super::*;
    /// Looks up a parcel.
    #[ai_tool(name = "lookup")]
    pub fn lookup_parcel(id: u32) -> u32 {
        id
    }
}

#[test]
fn two_registered_tools_with_one_name_are_a_build_error_naming_both() {
    let err = Executor::builder().build().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("two tools are named `lookup`"), "{text}");
    assert!(text.contains("build_error_duplicates::billing"), "{text}");
    assert!(text.contains("build_error_duplicates::shipping"), "{text}");
    assert!(
        text.contains("build_error_duplicates.rs:10")
            && text.contains("build_error_duplicates.rs:19"),
        "{text}"
    );
}
