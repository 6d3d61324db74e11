use ai_tool::prelude::*;

struct Users;

#[ai_tools(prefix = "users.v2")]
impl Users {
    /// Gets a user.
    #[ai_tool]
    fn get(&self) -> u32 {
        1
    }
}

struct Orders;

#[ai_tools(prefix = "orders_of_the_customers_who_bought_something_last_year")]
impl Orders {
    /// Lists the orders.
    #[ai_tool]
    fn list_everything(&self) -> u32 {
        1
    }
}

fn main() {}
