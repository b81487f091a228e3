"""A card game with a planted defect, for the fault suite's engine-error lane."""
