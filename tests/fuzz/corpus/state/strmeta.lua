set{kind = ("layer"):upper():lower()}
