from shapelint.rules.record import Rule

RULES: list[Rule] = []
