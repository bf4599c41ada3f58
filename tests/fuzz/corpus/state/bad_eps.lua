set{eps = -1}
