print("devproxy-load")
