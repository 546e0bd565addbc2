"""What the tests share: tables, deals and scripts (helpers), every variant's tables
(variant_configs), training runs (training_helpers), the extras' examples (extras)."""
