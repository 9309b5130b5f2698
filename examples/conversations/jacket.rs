//! The three-turn conversation `examples/conversation.rs` and
//! `tests/conversation.rs` grade: a shop's assistant asked about returning
//! a jacket. Turn 2 is a right follow-up that means nothing without turn 1;
//! turn 3 asks what its passages cannot answer, and the answer invents a
//! price and a deadline that contradicts turns 1 and 2.

use ragaliq::{Conversation, Turn};

const POLICY: &str = "Jackets and coats bought online can be returned within 30 days of delivery.";
const RECEIPT: &str = "Returns need the order number and the receipt.";

pub fn jacket() -> Conversation {
    Conversation::new([
        Turn::new("Can I return a jacket I bought online?")
            .context([POLICY, RECEIPT])
            .response("Yes. Jackets bought online can be returned within 30 days of delivery, with the order number and the receipt."),
        Turn::new("And how long do I have?")
            .context([POLICY])
            .response("You have 30 days from delivery."),
        Turn::new("And if I send it back from Canada, what does the shipping cost?")
            .context([POLICY, RECEIPT])
            .response("Shipping a return from Canada is free, and you have 14 days from the order date to send it."),
    ])
    .id("jacket-return")
}
